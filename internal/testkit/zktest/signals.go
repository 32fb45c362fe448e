package zktest

import (
	"os"
	"os/signal"
	"syscall"
)

// UnignoreSignals makes the test process's children start with SIGHUP and
// SIGINT at their defaults even when the tests were started with them
// ignored (under nohup, or in the background of a non-interactive shell).
// An ignored signal is inherited across exec, and zklock, like a shell,
// leaves a signal ignored on entry ignored for its command: a test of
// signal forwarding would then test how it was launched. A caught signal
// is reset to the default by exec, so catching them here is enough. Only
// signals that are ignored now are caught, so Ctrl-C still stops a test
// run started from a terminal.
func UnignoreSignals() {
	for _, sig := range []os.Signal{syscall.SIGHUP, syscall.SIGINT} {
		if signal.Ignored(sig) {
			signal.Notify(make(chan os.Signal, 1), sig)
		}
	}
}
