package recipe

import (
	"errors"
	"fmt"
	"strings"

	"github.com/zklock/zklock/zkconn"
)

// ValidatePath checks a lock path: a path the server accepts (see
// zkconn.ValidatePath) that is not the root, with no component named as a
// contender of a known flavor. The root holds every other node, so
// contenders there would share it with the whole tree. A component named
// as a contender (a contender's own path taken for its lock's) would be
// created as a container that the lock above it counts as a holder, and
// that lock's queue would wait until the server reaps it.
func ValidatePath(p string) error {
	if p == "/" {
		return fmt.Errorf("%w: the root node cannot be a lock", zkconn.ErrBadPath)
	}
	if err := zkconn.ValidatePath(p); err != nil {
		return err
	}
	parent := "/"
	for _, comp := range strings.Split(p[1:], "/") {
		if c, ok := ParseContender(comp); ok && c.Flavor != FlavorUnknown {
			return fmt.Errorf("%w: %q has a component named as a contender of the lock at %s (%s), which would count it as a holder",
				zkconn.ErrBadPath, p, parent, comp)
		}
		parent = zkconn.Join(parent, comp)
	}
	return nil
}

// ErrBadNode marks a contender's name that no child of the lock path could
// have.
var ErrBadNode = errors.New("bad node")

// ValidateNode checks that node could name a contender of the lock at
// path: a child's name (one component the server would accept), a
// semaphore's leases/NAME or locks/NAME, or the full path of a node below
// path (a semaphore's are a level down).
// It says nothing of whether that node exists.
func ValidateNode(path, node string) error {
	full := zkconn.Join(path, node)
	if strings.HasPrefix(node, "/") {
		full = node
	}
	// A semaphore's contender, as list shows it: leases/NAME or locks/NAME.
	under, _, nested := strings.Cut(node, "/")
	semaphoreChild := full != node && nested && (under == semLeases || under == semLocks) &&
		strings.Count(node, "/") == 1
	if node == "" || (full == node && !strings.HasPrefix(node, zkconn.Join(path, ""))) ||
		(full != node && strings.Contains(node, "/") && !semaphoreChild) || zkconn.ValidatePath(full) != nil {
		return fmt.Errorf("%w: %s is neither a node's name nor a full path below %s", ErrBadNode, node, path)
	}
	if _, ok := ParseContender(full[strings.LastIndexByte(full, '/')+1:]); !ok {
		// Every recipe's contender ends in the server's sequence number.
		return fmt.Errorf("%w: %s is not a contender's name: those end in a 10-digit sequence number, as list shows them", ErrBadNode, node)
	}
	return nil
}
