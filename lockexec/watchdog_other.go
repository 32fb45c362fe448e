//go:build !unix

package lockexec

import "errors"

// Watchdog is unsupported here: Run itself is Unix-only.
type Watchdog struct{}

// StartWatchdog is unsupported on this platform.
func StartWatchdog() (*Watchdog, error) { return nil, errors.New("unsupported platform") }

// Retire does nothing.
func (wd *Watchdog) Retire() {}
