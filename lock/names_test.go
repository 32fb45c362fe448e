package lock

import (
	"math"
	"reflect"
	"strings"
	"testing"
)

func TestParseSeq(t *testing.T) {
	tests := []struct {
		name string
		seq  int32
		ok   bool
	}{
		{"x-lock-0000000000", 0, true},
		{"x-lock-0000000042", 42, true},
		{"x-lock-2147483647", math.MaxInt32, true},
		{"x-lock--000000001", -1, true},
		{"x-lock--2147483648", math.MinInt32, true}, // %010d of a wrapped counter
		{"x-lock--1000000000", -1000000000, true},
		{"x-lock-1000000000", 1000000000, true},
		{"x__lock__-1000000000", -1000000000, true},
		{"x-2147483648", math.MinInt32, true}, // no marker, but ten digits would overflow
		{"x-lock--0999999999", 999999999, true},
		{"x-lock-000000004", -4, true}, // stem "x-lock" + "-000000004"
		{"000000004", 0, false},
		{"locks", 0, false},
		{"leases", 0, false},
		{"x-lock-00000000a1", 0, false},
		{"x-lock-00-0000001", 0, false},
	}
	for _, tt := range tests {
		seq, ok := ParseSeq(tt.name)
		if ok != tt.ok || (ok && seq != tt.seq) {
			t.Errorf("ParseSeq(%q) = %d, %v; want %d, %v", tt.name, seq, ok, tt.seq, tt.ok)
		}
	}
}

func TestParseContender(t *testing.T) {
	const uuid = "2f1c0c5e-8b5e-4c1e-9b0e-1a2b3c4d5e6f"
	tests := []struct {
		name   string
		kind   Kind
		flavor Flavor
		guid   string
	}{
		{"_c_" + uuid + "-lock-0000000007", Exclusive, FlavorCurator, uuid},
		{"_c_" + uuid + "-__WRIT__0000000007", Exclusive, FlavorCurator, uuid},
		{"_c_" + uuid + "-__READ__0000000007", Shared, FlavorCurator, uuid},
		{"0123456789abcdef0123456789abcdef__lock__0000000007", Exclusive, FlavorKazoo, "0123456789abcdef0123456789abcdef"},
		{"0123456789abcdef0123456789abcdef__rlock__0000000007", Shared, FlavorKazoo, "0123456789abcdef0123456789abcdef"},
		{"member-0000000007", Exclusive, FlavorUnknown, ""},
		{"lock-0000000007", Exclusive, FlavorUnknown, ""},
	}
	for _, tt := range tests {
		c, ok := ParseContender(tt.name)
		if !ok || c.Kind != tt.kind || c.Flavor != tt.flavor || c.GUID != tt.guid || c.Seq != 7 {
			t.Errorf("ParseContender(%q) = %+v, %v", tt.name, c, ok)
		}
	}
	if _, ok := ParseContender("leases"); ok {
		t.Error("a child without a sequence number must not be a contender")
	}
}

func TestContendersOrder(t *testing.T) {
	got := Contenders([]string{"b-lock-0000000010", "leases", "a-lock-0000000002", "x__lock__0000000005"})
	var names []string
	for _, c := range got {
		names = append(names, c.Name)
	}
	if want := "a-lock-0000000002 x__lock__0000000005 b-lock-0000000010"; strings.Join(names, " ") != want {
		t.Errorf("order = %v, want %s", names, want)
	}
}

func TestContendersOrderAcrossWrap(t *testing.T) {
	// The counter wraps from 2147483647 to -2147483648; the older nodes
	// (large positive) must still come first.
	order := ""
	for _, c := range Contenders([]string{"n3-lock--000000002", "n1-lock-2147483647", "n2-lock--000000003"}) {
		order += c.Name[:2]
	}
	if order != "n1n2n3" {
		t.Errorf("order across wrap = %s, want n1n2n3", order)
	}
}

func TestHoldsAndBlocker(t *testing.T) {
	q := Contenders([]string{
		"r1__rlock__0000000001", "r2__rlock__0000000002", "w3__lock__0000000003",
		"r4__rlock__0000000004", "w5__lock__0000000005",
	})
	wantHolds := []bool{true, true, false, false, false}
	wantBlocker := []int{-1, -1, 1, 2, 3}
	for i := range q {
		if got := Holds(q, i); got != wantHolds[i] {
			t.Errorf("Holds(%s) = %v", q[i].Name, got)
		}
		if got := blocker(q, i); got != wantBlocker[i] {
			t.Errorf("blocker(%s) = %d, want %d", q[i].Name, got, wantBlocker[i])
		}
	}
}

func TestOwnerRoundTrip(t *testing.T) {
	o := NewOwner("v1.0.0", []string{"sh", "-c", "echo hi"}, ModeExclusive)
	d := DecodeNodeData(o.Encode())
	if got := d.Owner; !d.ByZklock || d.Raw != "" || got.PID != o.PID || got.Host != o.Host || !got.Since.Equal(o.Since) {
		t.Errorf("DecodeNodeData(Encode()) = %+v", d)
	}
	for _, raw := range []string{
		"10.1.2.3",         // Curator
		`{"other":"json"}`, // foreign JSON
		"\xff\xfe",         // kept as it is; whoever prints it escapes it
	} {
		if got, want := DecodeNodeData([]byte(raw)), (NodeData{Raw: raw}); !reflect.DeepEqual(got, want) {
			t.Errorf("DecodeNodeData(%q) = %+v, want %+v", raw, got, want)
		}
	}
}

func TestNewUUID(t *testing.T) {
	u := newUUID()
	if len(u) != 36 || u[14] != '4' || strings.Count(u, "-") != 4 || newUUID() == u {
		t.Errorf("newUUID() = %q", u)
	}
	if c, ok := ParseContender(curatorPrefix + u + "-lock-0000000001"); !ok || c.GUID != u {
		t.Errorf("our own name does not parse back: %+v", c)
	}
}

func TestCommandLine(t *testing.T) {
	o := Owner{Cmd: []string{"sh", "-c", `echo "it's $HOME"`, "", "plain"}}
	if got, want := o.CommandLine(), `sh -c 'echo "it'\''s $HOME"' '' plain`; got != want {
		t.Errorf("CommandLine = %s, want %s", got, want)
	}
}

func TestBoundArgv(t *testing.T) {
	long := strings.Repeat("x", 10)
	for _, tc := range []struct {
		argv []string
		max  int
		want []string
		cut  int
	}{
		{[]string{"sh", "-c", "true"}, 64, []string{"sh", "-c", "true"}, 0},
		{[]string{"echo", long}, 8, []string{"echo", "xxxx"}, 6},
		{[]string{"echo", long, "more"}, 4, []string{"echo"}, 14},
		{[]string{"é", "ééé"}, 5, []string{"é", "é"}, 4}, // never half a character
	} {
		got, cut := boundArgv(tc.argv, tc.max)
		if strings.Join(got, "|") != strings.Join(tc.want, "|") || cut != tc.cut {
			t.Errorf("boundArgv(%q, %d) = %q, %d; want %q, %d", tc.argv, tc.max, got, cut, tc.want, tc.cut)
		}
	}
	o := NewOwner("v", []string{"echo", strings.Repeat("y", 2<<20)}, ModeExclusive)
	if n := len(o.Encode()); n > MaxCmdBytes+1024 {
		t.Errorf("a 2 MiB command line makes %d bytes of node data", n)
	}
	if got := o.CommandLine(); !strings.HasSuffix(got, " …[2093060 bytes more]") {
		t.Errorf("a cut command line does not say so: %q", got[len(got)-40:])
	}
}
