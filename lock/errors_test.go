package lock

import (
	"errors"
	"testing"
)

// An error a caller builds (in its own tests, say) has a message and is
// its sentinel, as one that Acquire returns is.
func TestErrorsBuiltByCallers(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want error
	}{
		{&BusyError{Path: "/a", Holder: "/a/n"}, ErrBusy},
		{&RevokedError{Path: "/a", Node: "/a/n"}, ErrRevoked},
		{&KindConflictError{Path: "/a", Node: "/a/n"}, ErrKindConflict},
		{&FlavorConflictError{Path: "/a", Node: "/a/n", Other: "Kazoo"}, ErrFlavorConflict},
		{&LimitMismatchError{Path: "/a", Holder: "/a/leases/n", Held: 2, Want: 3}, ErrLimitMismatch},
	} {
		if !errors.Is(tc.err, tc.want) || tc.err.Error() == "" {
			t.Errorf("%T: Is(%v) = %v, message %q", tc.err, tc.want, errors.Is(tc.err, tc.want), tc.err.Error())
		}
	}
}
