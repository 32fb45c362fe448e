//go:build !linux

package runner

// argLimits: other systems have no limit per string, and zklock does not
// guess their total; the command's start reports E2BIG there (126).
func argLimits() (perVar, total int) { return 0, 0 }
