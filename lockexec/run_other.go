//go:build !unix

package lockexec

import (
	"context"
	"errors"
	"runtime"
	"syscall"
)

// Run is only implemented on Unix systems: process groups, terminal
// foreground control and job control have no direct equivalent elsewhere.
func Run(ctx context.Context, s Spec) error {
	return errors.New("lockexec: running commands is not supported on " + runtime.GOOS)
}

// Resolve reports the same lack of support as Run.
func Resolve(argv []string) (string, error) {
	return "", errors.New("lockexec: running commands is not supported on " + runtime.GOOS)
}

func signalName(sig syscall.Signal) string { return sig.String() }
