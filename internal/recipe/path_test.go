package recipe

import (
	"errors"
	"testing"

	"github.com/zklock/zklock/zkconn"
)

// TestValidatePath: a lock path is a path the server takes, not the root,
// and has no component named as a contender of a known flavor. Such a
// component (a node path from list or ZKLOCK_NODE given as --path) would
// be created as a container that its parent's lock counts as a holder,
// stalling that queue until the server reaps it, or for ever with
// --protect. A name that merely ends in digits is a lock path like any.
func TestValidatePath(t *testing.T) {
	for _, p := range []string{
		"/locks/job",
		"/locks/deploy-1732377600",
		"/locks/_c_notes",
		"/locks/lock-0000000001",
	} {
		if err := ValidatePath(p); err != nil {
			t.Errorf("ValidatePath(%q) = %v, want nil", p, err)
		}
	}
	for _, p := range []string{
		"/",
		"locks/job",
		"/locks/job/_c_0f6c2b1e-5d8a-4c51-9a53-0d1e2f3a4b5c-lock-0000000012",
		"/locks/job/_c_0f6c-lock-0000000012/sub",
		"/locks/rw/_c_0f6c-__READ__0000000003",
		"/locks/sem/leases/_c_0f6c-lease-0000000007",
		"/app/lock/5e3b21c0a7d14f2e__lock__0000000001",
		"/app/rw/5e3b21c0a7d14f2e__rlock__0000000002",
	} {
		if err := ValidatePath(p); !errors.Is(err, zkconn.ErrBadPath) {
			t.Errorf("ValidatePath(%q) = %v, want ErrBadPath", p, err)
		}
	}
}
