package inspect

import (
	"errors"

	"github.com/zklock/zklock/internal/recipe"
	"github.com/zklock/zklock/internal/success"
)

// IsConflict reports whether err from Revoke or Forget means someone
// else kept what was asked for: a holder that cannot hear a revocation
// or did not release in time, a lock that kept changing hands, a success
// record that kept being rewritten. zklock exits with its conflict code
// for these, as tryrun does for a busy lock.
func IsConflict(err error) bool {
	return errors.Is(err, recipe.ErrHandoffChurn) || errors.Is(err, success.ErrChurn) ||
		errors.As(err, new(*NotRevocableError)) || errors.As(err, new(*RevokeTimeoutError))
}
