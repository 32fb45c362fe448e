//go:build unix && !linux

package lockexec

import (
	"os"

	"golang.org/x/sys/unix"
)

// sharedNow reads the clock zklock and its watchdog share. On Darwin and
// the BSDs CLOCK_MONOTONIC is system-wide and goes on while asleep.
func sharedNow() int64 {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		return 0
	}
	return ts.Nano()
}

func selfExecutable() (string, error) { return os.Executable() }
