package runner

import (
	"fmt"
	"os"
	"strings"
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
}

func (e *EnvTooLargeError) Error() string {
	if e.Var != "" {
		return fmt.Sprintf("the command's %s would be %d bytes with %d paths, over the kernel's limit of %d bytes for one variable (MAX_ARG_STRLEN)",
			e.Var, e.Size, e.Paths, e.Limit)
	}
	return fmt.Sprintf("the command's arguments and environment would be %d bytes with %d paths, over the kernel's limit of %d bytes (ARG_MAX)",
		e.Size, e.Paths, e.Limit)
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
	for _, p := range o.Paths {
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
	// Each string counts with its NUL, each pointer with 8 bytes.
	sum := 0
	for _, v := range vars {
		size := len(v.name) + 1 + v.size + 1
		if size > perVar {
			return &EnvTooLargeError{Var: v.name, Size: size, Limit: perVar, Paths: len(o.Paths)}
		}
		sum += size + 8
	}
	// The singular variables and ZKLOCK_PID, at their longest.
	sum += 4 * (64 + maxNodeName + len(o.Paths[0]))
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, EnvHeld+"=") {
			sum += len(kv) + 1 + 8
		}
	}
	for _, a := range o.Argv {
		sum += len(a) + 1 + 8
	}
	if sum > total {
		return &EnvTooLargeError{Size: sum, Limit: total, Paths: len(o.Paths)}
	}
	return nil
}
