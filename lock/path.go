package lock

import (
	"fmt"

	"github.com/zklock/zklock/zkconn"
)

// ValidatePath checks a lock path: a path the server accepts (see
// zkconn.ValidatePath) that is not the root. The root holds every other
// node, so contenders there would share it with the whole tree.
func ValidatePath(p string) error {
	if p == "/" {
		return fmt.Errorf("%w: the root node cannot be a lock", zkconn.ErrBadPath)
	}
	return zkconn.ValidatePath(p)
}
