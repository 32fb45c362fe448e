package lockexec

import "strings"

// childEnviron is the environment the command gets: env with each name
// once, its last value kept, as os/exec does. A caller that adds
// variables to its own environment (zklock's ZKLOCK_* over an ancestor
// zklock's) appends them, and the last must win. Without this, what the
// command saw would depend on what reads the list: a shell takes the last
// of two entries, while a Go program, the gate among them, keeps the
// first and drops the rest.
func childEnviron(env []string) []string {
	seen := make(map[string]bool, len(env))
	out := make([]string, 0, len(env))
	for i := len(env) - 1; i >= 0; i-- {
		name, _, _ := strings.Cut(env[i], "=")
		if seen[name] {
			continue
		}
		seen[name] = true
		out = append(out, env[i])
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out
}
