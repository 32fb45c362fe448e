//go:build linux

package bench

import (
	"time"
)

// holdScript is the holder's command in the handoff, memory and queue
// tests: it blocks until the driver opens and closes the FIFO ($0), then
// becomes the probe (its arguments), whose output is the moment the
// holder's command ends (the probe exits right after printing).
const holdScript = `read _ < "$0"; exec "$@"`

// holdOnlyScript blocks until released and prints nothing. `read` fails
// at end of file, which is what the release is, hence the `|| :`.
const holdOnlyScript = `read _ < "$0" || :`

// byClass picks the value for the tool's class: a native binary, a Python
// interpreter or a JVM, whose start-ups differ by orders of magnitude.
func byClass[T any](t *Tool, native, python, jvm T) T {
	switch t.Class {
	case "python":
		return python
	case "jvm":
		return jvm
	}
	return native
}

func settleFor(t *Tool) time.Duration {
	return byClass(t, 500*time.Millisecond, time.Second, 2*time.Second)
}
