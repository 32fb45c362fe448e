package owner

import (
	"testing"
	"time"
)

var (
	sinkData  NodeData
	sinkBytes []byte
)

func BenchmarkDecode(b *testing.B) {
	o := Owner{Zklock: "v1.2.3", Host: "web-3.example.com", PID: 81233, User: "deploy",
		Cmd:   []string{"/usr/local/bin/report.sh", "--full", "--since", "yesterday"},
		Since: time.Date(2026, 11, 21, 3, 0, 1, 0, time.UTC), Mode: "exclusive"}
	data := []struct {
		label string
		data  []byte
	}{
		{"zklock-json", o.Encode()},
		{"curator-ip", []byte("10.1.2.3")},
		{"kazoo-id", []byte("web-7.example.com-31337")},
		{"binary", []byte{0xff, 0xfe, 0x00, 0x01}},
	}
	for _, tt := range data {
		b.Run(tt.label, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(tt.data)))
			for b.Loop() {
				sinkData = Decode(tt.data)
			}
		})
	}
}

// BenchmarkOwnerEncode is the node data every run writes when it joins.
func BenchmarkOwnerEncode(b *testing.B) {
	o := Owner{Zklock: "v1.2.3", Host: "web-3.example.com", PID: 81233, User: "deploy",
		Cmd:   []string{"/usr/local/bin/report.sh", "--full"},
		Since: time.Date(2026, 11, 21, 3, 0, 1, 0, time.UTC), Mode: "exclusive"}
	b.ReportAllocs()
	for b.Loop() {
		sinkBytes = o.Encode()
	}
}
