package zkconn

import (
	"encoding/binary"
	"testing"
)

func frame(body ...byte) []byte {
	b := make([]byte, 4, 4+len(body))
	binary.BigEndian.PutUint32(b, uint32(len(body)))
	return append(b, body...)
}

// TestFrameReaderSplits feeds frames byte by byte and in one piece: the
// frame boundaries found must be the same.
func TestFrameReaderSplits(t *testing.T) {
	var stream []byte
	stream = append(stream, frame(1, 2, 3)...)
	stream = append(stream, frame()...)
	big := make([]byte, 100)
	big[0] = 0xff
	stream = append(stream, frame(big...)...)
	for _, chunk := range []int{1, 3, 7, len(stream)} {
		var r frameReader
		var heads [][]byte
		firsts := 0
		for i := 0; i < len(stream); i += chunk {
			end := min(i+chunk, len(stream))
			r.feed(stream[i:end], func(first bool, head []byte) {
				if first {
					firsts++
				}
				heads = append(heads, append([]byte(nil), head...))
			})
		}
		if len(heads) != 3 || firsts != 1 || len(heads[0]) != 3 || len(heads[1]) != 0 ||
			len(heads[2]) != headLen || heads[2][0] != 0xff {
			t.Errorf("chunk %d: heads %v, firsts %d", chunk, heads, firsts)
		}
	}
}
