package runner

import (
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/zklock/zklock/zkconn"
)

// EnvTooLargeError means the command could not be started under the locks
// asked for: the variables that tell it what it holds would be larger than
// the kernel lets a new program's environment be. Found before any lock is
// taken: a run that took every lock and then failed to start its command
// (E2BIG, "argument list too long", exit 126) made every other job wait for
// nothing.
type EnvTooLargeError struct {
	Var   string // the variable over the limit, or "" for the total
	Size  int    // its size, or the total's, in bytes (an estimate from above)
	Limit int
	Paths int
	// Members is, for a pool, how many members the command would hold
	// (each a lock path of its own); 0 without a pool.
	Members int
}

func (e *EnvTooLargeError) Error() string {
	with := fmt.Sprintf("%d paths", e.Paths)
	if e.Members > 0 {
		with = fmt.Sprintf("%d pool members", e.Members)
	}
	if e.Var != "" {
		return fmt.Sprintf("the command's %s would be %d bytes with %s, over the kernel's limit of %d bytes for one variable (MAX_ARG_STRLEN)",
			e.Var, e.Size, with, e.Limit)
	}
	return fmt.Sprintf("the command's arguments and environment would be %d bytes with %s, over the kernel's limit of %d bytes (ARG_MAX)",
		e.Size, with, e.Limit)
}

// maxNodeName bounds a contender node's name below its lock path, with the
// slash before it: a semaphore's "/leases/_c_UUID-lease-" and ten digits
// is the longest zklock makes (65 bytes).
const maxNodeName = 72

// checkEnvironment estimates, from above, the environment environment()
// gives the command (node names and fencing tokens at their longest), and
// refuses a run the kernel would not start. Nothing has been created yet.
func (o *Options) checkEnvironment() error {
	perVar, total := argLimits()
	if perVar == 0 {
		return nil
	}
	chroot := o.Conn.ConnString.Chroot
	mode := modeName(o.Mode)
	ours := map[string]bool{}
	var paths, nodes, tokens, held int
	lockPaths, resources := o.heldAtLongest()
	for _, p := range lockPaths {
		sp := serverPath(chroot, p)
		ours[sp] = true
		paths += len(p) + 1
		nodes += len(p) + maxNodeName + 1
		tokens += 20 + 1
		// MODE:0x<16 hex>:PID:NODE and a space.
		held += len(mode) + 1 + 18 + 1 + 10 + 1 + len(escapeNode(sp)) + maxNodeName + 1
	}
	for _, h := range parseHeld(os.Getenv(EnvHeld)) {
		if !ours[h.Path()] {
			held += len(h.String()) + 1
		}
	}
	vars := []struct {
		name string
		size int
	}{{EnvHeld, held}, {"ZKLOCK_PATHS", paths}, {"ZKLOCK_NODES", nodes}, {"ZKLOCK_FENCING_TOKENS", tokens}}
	if o.Pool != nil {
		vars = append(vars, struct {
			name string
			size int
		}{EnvResources, resources})
	}
	tooLarge := func(name string, size, limit int) error {
		e := &EnvTooLargeError{Var: name, Size: size, Limit: limit, Paths: len(o.Paths)}
		if o.Pool != nil {
			e.Members = o.Pool.Take
		}
		return e
	}
	// Each string counts with its NUL, each pointer with 8 bytes.
	sum := 0
	for _, v := range vars {
		size := len(v.name) + 1 + v.size + 1
		if size > perVar {
			return tooLarge(v.name, size, perVar)
		}
		sum += size + 8
	}
	// The singular variables and ZKLOCK_PID, at their longest.
	sum += 4 * (64 + maxNodeName + len(lockPaths[0]))
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, EnvHeld+"=") {
			sum += len(kv) + 1 + 8
		}
	}
	for _, a := range o.Argv {
		sum += len(a) + 1 + 8
	}
	if sum > total {
		return tooLarge("", sum, total)
	}
	return nil
}

// heldAtLongest is what the command will hold, at its longest: the lock
// paths, or for a pool the paths of the Take members with the longest
// names (each member is a lock of its own under the pool path, and the
// variables list them all), longest first; and for a pool the length of
// ZKLOCK_RESOURCES's value, those names comma-separated.
func (o *Options) heldAtLongest() (paths []string, resources int) {
	if o.Pool == nil {
		return o.Paths, 0
	}
	members := slices.Clone(o.Pool.Members)
	slices.SortFunc(members, func(a, b string) int { return len(b) - len(a) })
	members = members[:min(o.Pool.Take, len(members))]
	for _, m := range members {
		paths = append(paths, zkconn.Join(o.Paths[0], m))
		resources += len(m) + 1
	}
	return paths, resources - 1
}
