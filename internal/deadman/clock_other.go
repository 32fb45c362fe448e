//go:build unix && !linux

package deadman

import "golang.org/x/sys/unix"

// Now is the shared clock in nanoseconds, the one zklock and its watchdog
// both read deadlines on. On Darwin and the BSDs CLOCK_MONOTONIC is
// system-wide and goes on while the machine is asleep.
func Now() int64 {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		return 0
	}
	return ts.Nano()
}
