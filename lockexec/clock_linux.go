package lockexec

import (
	"os"

	"golang.org/x/sys/unix"
)

// sharedNow reads the clock zklock and its watchdog share: CLOCK_BOOTTIME,
// which, unlike the monotonic clock Go's timers use, goes on counting while
// the machine is suspended, as the ZooKeeper servers' clocks do.
func sharedNow() int64 {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_BOOTTIME, &ts); err != nil {
		return 0
	}
	return ts.Nano()
}

// selfExecutable is the running binary, even if it was replaced or
// deleted on disk since it started (an upgrade in place).
func selfExecutable() (string, error) {
	if _, err := os.Stat("/proc/self/exe"); err == nil {
		return "/proc/self/exe", nil
	}
	return os.Executable()
}
