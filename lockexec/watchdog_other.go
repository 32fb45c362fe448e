//go:build !unix

package lockexec

import (
	"errors"
	"time"
)

// Watchdog is unsupported here: Run itself is Unix-only.
type Watchdog struct{}

// StartWatchdog is unsupported on this platform.
func StartWatchdog() (*Watchdog, error) { return nil, errors.New("unsupported platform") }

// Retire does nothing.
func (wd *Watchdog) Retire() {}

// Renew does nothing.
func (wd *Watchdog) Renew(stop, kill time.Time) {}

// IsWatchdog is always false here.
func IsWatchdog() bool { return false }

// WatchdogMain is never called here.
func WatchdogMain() int { return 1 }
