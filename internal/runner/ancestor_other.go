//go:build !linux

package runner

// isAncestor cannot read the process tree cheaply here; the server's check
// (the node exists and belongs to the session named) still decides.
func isAncestor(pid int) bool { return true }
