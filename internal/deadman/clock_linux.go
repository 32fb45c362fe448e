package deadman

import "golang.org/x/sys/unix"

// Now is the shared clock in nanoseconds, the one zklock and its watchdog
// both read deadlines on. CLOCK_BOOTTIME keeps counting while the machine
// is suspended, as the ZooKeeper servers' clocks do: a deadline that
// passed during a suspend has passed.
func Now() int64 {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_BOOTTIME, &ts); err != nil {
		return 0
	}
	return ts.Nano()
}
