package lockexec

import (
	"slices"
	"testing"
)

// TestChildEnviron: each name once, its last value kept, in the order of
// the values kept; an entry without "=" is a name of its own.
func TestChildEnviron(t *testing.T) {
	got := childEnviron([]string{"A=1", "B=2", "ZKLOCK_PATHS=/a", "C", "A=3", "ZKLOCK_PATHS=/a /b", "C"})
	want := []string{"B=2", "A=3", "ZKLOCK_PATHS=/a /b", "C"}
	if !slices.Equal(got, want) {
		t.Errorf("childEnviron = %q, want %q", got, want)
	}
}
