//go:build unix && !linux

package lockexec

import "syscall"

// setPdeathsig does nothing: only Linux has a parent-death signal.
func setPdeathsig(*syscall.SysProcAttr) {}
