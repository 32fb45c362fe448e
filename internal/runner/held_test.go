package runner

import (
	"os"
	"testing"

	"github.com/zklock/zklock/internal/recipe"
)

// TestHeldRoundTrip: every mode, and node paths with spaces, colons and
// percent signs, read back as written; entries that cannot be read are
// skipped rather than trusted.
func TestHeldRoundTrip(t *testing.T) {
	hs := []hold{
		{Mode: recipe.ModeExclusive, Session: 0x1000a2b3c4d0005, PID: 42, Node: "/locks/deploy/_c_x-lock-0000000003"},
		{Mode: recipe.ModeShared, Session: 1, PID: 7, Node: "/a b/c:d%20/_c_y-__READ__0000000001"},
		{Mode: recipe.ModeLimit(3), Session: -2, PID: 9, Node: "/sem/leases/_c_z-lease-0000000004"},
	}
	v := formatHeld(hs)
	got := parseHeld(v + " junk exclusive:12:1:/x shared:0x1:0:/x limit=0:0x1:1:/s/leases/n limit=2:0x1:1:/s/n")
	if len(got) != len(hs) {
		t.Fatalf("parseHeld(%q) = %+v, want %+v", v, got, hs)
	}
	for i := range hs {
		if got[i] != hs[i] {
			t.Errorf("entry %d: got %+v, want %+v", i, got[i], hs[i])
		}
	}
	for i, want := range []string{"/locks/deploy", "/a b/c:d%20", "/sem"} {
		if p := got[i].Path(); p != want {
			t.Errorf("entry %d: path %q, want %q", i, p, want)
		}
	}
}

// TestCovers states the re-entry rules.
func TestCovers(t *testing.T) {
	ex, sh, l3, l2 := recipe.ModeExclusive, recipe.ModeShared, recipe.ModeLimit(3), recipe.ModeLimit(2)
	for _, tc := range []struct {
		held, want recipe.Mode
		ok         bool
	}{
		{ex, ex, true}, {ex, sh, true}, {ex, l3, false},
		{sh, sh, true}, {sh, ex, false}, {sh, l3, false},
		{l3, l3, true}, {l3, l2, false}, {l3, ex, false}, {l3, sh, false},
	} {
		if got := covers(tc.held, tc.want); got != tc.ok {
			t.Errorf("covers(%s, %s) = %v, want %v", modeName(tc.held), modeName(tc.want), got, tc.ok)
		}
	}
}

// TestIsAncestor: this process's parent is an ancestor; itself and a
// process that is not in the chain are not.
func TestIsAncestor(t *testing.T) {
	if !isAncestor(os.Getppid()) {
		t.Errorf("the parent %d is not seen as an ancestor", os.Getppid())
	}
	if isAncestor(os.Getpid()) {
		t.Errorf("this process %d is seen as its own ancestor", os.Getpid())
	}
}
