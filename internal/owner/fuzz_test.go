package owner

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

// FuzzDecode: node data of any shape decodes without a panic; what
// is recognised as zklock's own re-encodes to the same owner, and what is
// not comes back only as trimmed text.
func FuzzDecode(f *testing.F) {
	own := Owner{Zklock: "1.0", Host: "h", PID: 42, User: "u", Cmd: []string{"sh", "-c", "x y"},
		Since: time.Date(2024, 11, 23, 12, 0, 0, 0, time.UTC), Mode: "shared", Limit: 3}
	for _, b := range [][]byte{
		own.Encode(), []byte("10.0.0.7"), []byte("  kazoo-client-1 \n"), []byte(`{"zklock":""}`),
		[]byte(`{"zklock":"x","pid":"nan"}`), []byte(`{"zklock":"x","since":"yesterday"}`),
		[]byte("{"), []byte("\xff\xfe"), nil, []byte("__REVOKE__"),
	} {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		d := Decode(data)
		o, raw := d.Owner, d.Raw
		if !d.ByZklock {
			if !reflect.DeepEqual(o, Owner{}) {
				t.Fatalf("%q: not by zklock, yet an owner %+v", data, o)
			}
			if raw != strings.TrimSpace(raw) || !strings.Contains(string(data), raw) {
				t.Fatalf("%q: raw %q is not the trimmed data", data, raw)
			}
			return
		}
		if raw != "" || o.Zklock == "" {
			t.Fatalf("%q: by zklock, with raw %q and version %q", data, raw, o.Zklock)
		}
		again := Decode(o.Encode())
		if !again.ByZklock || !reflect.DeepEqual(normal(again.Owner), normal(o)) {
			t.Fatalf("%q: owner %+v re-encodes to %+v", data, o, again)
		}
		_ = o.CommandLine()
	})
}

// normal compares times by instant: JSON keeps the instant and the
// offset, not the *time.Location value.
func normal(o Owner) Owner {
	o.Since = o.Since.UTC()
	return o
}
