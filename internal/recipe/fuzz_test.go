package recipe

import (
	"encoding/hex"
	"fmt"
	"strings"
	"testing"
)

// FuzzParseContender: any child name parses without a panic, and a parsed
// name's suffix is its sequence number.
func FuzzParseContender(f *testing.F) {
	for _, s := range []string{
		"_c_2f1c0c5e-8b5e-4c1e-9b0e-1a2b3c4d5e6f-lock-0000000042",
		"_c_2f1c0c5e-8b5e-4c1e-9b0e-1a2b3c4d5e6f-__READ__0000000001",
		"_c_2f1c0c5e-8b5e-4c1e-9b0e-1a2b3c4d5e6f-__WRIT__-000000001",
		"_c_2f1c0c5e-8b5e-4c1e-9b0e-1a2b3c4d5e6f-lease--2147483648",
		"3f2504e04f8911d39a0c0305e82c3301__lock__0000000007",
		"3f2504e04f8911d39a0c0305e82c3301__rlock__2147483647",
		"deploy-1732377600", "locks", "leases", "0000000000", "-000000001", "x-lock-00-0000001",
		"x-lock--1000000000", "x-2147483648", "",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		c, ok := ParseContender(name)
		if !ok {
			return
		}
		if c.Name != name {
			t.Fatalf("%q: Name %q", name, c.Name)
		}
		if seq, ok := ParseSeq(name); !ok || seq != c.Seq {
			t.Fatalf("%q: ParseSeq %d, %v; ParseContender %d", name, seq, ok, c.Seq)
		}
		suffix := fmt.Sprintf("%010d", c.Seq)
		if !strings.HasSuffix(name, suffix) && !strings.HasSuffix(name, "-"+suffix[1:]) {
			t.Fatalf("%q: sequence %d is not its suffix", name, c.Seq)
		}
		c.family() // must not panic either
	})
}

// FuzzContenderNames: every name a client of each flavor makes, with any
// id and any sequence number the server can append (including a wrapped,
// negative counter), parses back to its kind, flavor, id and number.
func FuzzContenderNames(f *testing.F) {
	f.Add([]byte("0123456789abcdef"), uint8(0), int32(42))
	f.Add([]byte("0123456789abcdef"), uint8(3), int32(-1))
	f.Add([]byte("0123456789abcdef"), uint8(5), int32(-2147483648))
	f.Add([]byte("0123456789abcdef"), uint8(1), int32(2147483647))
	f.Add([]byte("0123456789abcdef"), uint8(2), int32(-1000000000))
	f.Add([]byte("0123456789abcdef"), uint8(4), int32(1000000000))
	type shape struct {
		stem   func(id string) string
		kind   Kind
		flavor Flavor
		guid   func(id string) string
	}
	curator := func(id string) string { return id }
	kazoo := func(id string) string { return strings.ReplaceAll(id, "-", "") }
	shapes := []shape{
		{func(id string) string { return curatorPrefix + id + "-lock-" }, Exclusive, FlavorCurator, curator},
		{func(id string) string { return curatorPrefix + id + "-__WRIT__" }, Exclusive, FlavorCurator, curator},
		{func(id string) string { return curatorPrefix + id + "-__READ__" }, Shared, FlavorCurator, curator},
		{func(id string) string { return curatorPrefix + id + "-lease-" }, SemaphoreLease, FlavorCurator, curator},
		{func(id string) string { return kazoo(id) + "__lock__" }, Exclusive, FlavorKazoo, kazoo},
		{func(id string) string { return kazoo(id) + "__rlock__" }, Shared, FlavorKazoo, kazoo},
	}
	f.Fuzz(func(t *testing.T, raw []byte, which uint8, seq int32) {
		if len(raw) < 16 {
			return
		}
		h := hex.EncodeToString(raw[:16])
		id := h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
		s := shapes[int(which)%len(shapes)]
		// The server appends the parent's child version as %010d.
		name := s.stem(id) + fmt.Sprintf("%010d", seq)
		c, ok := ParseContender(name)
		if !ok || c.Seq != seq || c.Kind != s.kind || c.Flavor != s.flavor || c.GUID != s.guid(id) {
			t.Fatalf("%q parses to %+v, %v; want seq %d, %s, %s, id %s", name, c, ok, seq, s.kind, s.flavor, s.guid(id))
		}
	})
}
