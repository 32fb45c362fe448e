package runner

import (
	"fmt"
	"path"
	"strconv"
	"strings"

	"github.com/zklock/zklock/internal/recipe"
	"github.com/zklock/zklock/zkconn"
)

// EnvHeld is the variable in which zklock tells its command, and every
// zklock the command starts, which locks are held on its behalf. It is an
// interface (docs/guide/reentrancy.md documents it): one entry per lock, separated by
// spaces, each
//
//	MODE:SESSION:PID:NODE
//
// MODE is "exclusive", "shared" or "limit=N" (a lease of a semaphore of N);
// SESSION the holding session's id in hex ("0x…"); PID the zklock process
// that holds it; NODE the lock node by its full path on the server, the
// chroot of the holder's connect string included, whose lock path is its
// parent (for a lease, the parent of "leases"). A space or "%" in NODE is written "%20" or
// "%25", so entries split on spaces and fields on the first three colons.
const EnvHeld = "ZKLOCK_HELD"

// hold is one lock that a zklock holds, as EnvHeld describes it.
type hold struct {
	Mode    recipe.Mode
	Session int64
	PID     int
	Node    string
}

// Path is the lock path that the hold's node belongs to.
func (h hold) Path() string {
	dir := path.Dir(h.Node)
	if h.Mode.Kind() == recipe.SemaphoreLease {
		return path.Dir(dir)
	}
	return dir
}

func (h hold) String() string {
	return fmt.Sprintf("%s:0x%x:%d:%s", modeName(h.Mode), uint64(h.Session), h.PID, escapeNode(h.Node))
}

// modeName is a mode as EnvHeld writes it.
func modeName(m recipe.Mode) string {
	if m.Kind() == recipe.SemaphoreLease {
		return "limit=" + strconv.Itoa(m.Limit())
	}
	return m.Kind().String()
}

func parseMode(s string) (recipe.Mode, bool) {
	switch s {
	case "exclusive":
		return recipe.ModeExclusive, true
	case "shared":
		return recipe.ModeShared, true
	}
	n, ok := strings.CutPrefix(s, "limit=")
	if !ok {
		return recipe.Mode{}, false
	}
	limit, err := strconv.Atoi(n)
	if err != nil || limit < 1 {
		return recipe.Mode{}, false
	}
	return recipe.ModeLimit(limit), true
}

var nodeEscaper = strings.NewReplacer("%", "%25", " ", "%20")

func escapeNode(n string) string { return nodeEscaper.Replace(n) }

func unescapeNode(n string) string {
	return strings.NewReplacer("%20", " ", "%25", "%").Replace(n)
}

// parseHeld reads EnvHeld's value. An entry it cannot read is skipped: it
// only ever costs the normal path, never a lock that is not held.
func parseHeld(v string) []hold {
	var out []hold
	for _, e := range strings.Fields(v) {
		f := strings.SplitN(e, ":", 4)
		if len(f) != 4 {
			continue
		}
		m, ok := parseMode(f[0])
		if !ok {
			continue
		}
		sess, err := strconv.ParseUint(strings.TrimPrefix(f[1], "0x"), 16, 64)
		if err != nil || !strings.HasPrefix(f[1], "0x") {
			continue
		}
		pid, err := strconv.Atoi(f[2])
		node := unescapeNode(f[3])
		if err != nil || pid < 1 || zkconn.ValidatePath(node) != nil || node == "/" {
			continue
		}
		h := hold{Mode: m, Session: int64(sess), PID: pid, Node: node}
		if m.Kind() == recipe.SemaphoreLease && path.Base(path.Dir(node)) != "leases" {
			continue
		}
		out = append(out, h)
	}
	return out
}

// AncestorHolder returns the pid of a zklock that holds a lock for this
// process: an entry of EnvHeld (as getenv gives it) that names an
// ancestor. A copied environment names none. It says that this zklock
// runs inside another's command, which speaks for the service already.
func AncestorHolder(getenv func(string) string) (pid int, ok bool) {
	for _, h := range parseHeld(getenv(EnvHeld)) {
		if isAncestor(h.PID) {
			return h.PID, true
		}
	}
	return 0, false
}

// formatHeld writes holds as EnvHeld's value.
func formatHeld(hs []hold) string {
	s := make([]string, len(hs))
	for i, h := range hs {
		s[i] = h.String()
	}
	return strings.Join(s, " ")
}

// covers reports whether holding held lets a request for want re-enter:
// an exclusive hold covers an exclusive or a shared request, a shared hold
// only a shared one, and a lease only a lease of the same semaphore (the
// same limit).
func covers(held, want recipe.Mode) bool {
	switch held.Kind() {
	case recipe.Exclusive:
		return want.Kind() == recipe.Exclusive || want.Kind() == recipe.Shared
	case recipe.Shared:
		return want.Kind() == recipe.Shared
	}
	return want.Kind() == recipe.SemaphoreLease && want.Limit() == held.Limit()
}

// serverPath is p, a path under chroot, as the server names it.
func serverPath(chroot, p string) string {
	if chroot == "" {
		return p
	}
	if p == "/" {
		return chroot
	}
	return chroot + p
}

// clientPath is p, a full path on the server that lies under chroot, as a
// client with that chroot names it.
func clientPath(chroot, p string) string {
	if chroot == "" {
		return p
	}
	if p == chroot {
		return "/"
	}
	return strings.TrimPrefix(p, chroot)
}
