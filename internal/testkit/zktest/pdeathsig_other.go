//go:build !linux

package zktest

import "os/exec"

// setParentDeathSignal is a no-op where there is no Pdeathsig: servers are
// then only cleaned up by Cluster.Stop.
func setParentDeathSignal(*exec.Cmd) {}
