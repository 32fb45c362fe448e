package cmd

import (
	"os"
	"os/signal"
	"syscall"
)

// survivePipes makes a write to a closed pipe an error instead of death.
//
// Go kills a program with SIGPIPE when a write to fd 1 or 2 hits a closed
// pipe, unless the program asks for SIGPIPE with signal.Notify; then the
// write returns EPIPE. A holder whose stderr reader went away (a log
// collector restarted, `2>&1 | head`) would otherwise die on its next
// warning: exit 141 instead of its own code, the command left without its
// supervisor, and the lock node left until the session expires.
//
// signal.Ignore would do the same for zklock, but an ignored disposition is
// inherited across exec, and the command's own pipelines (`yes | head -1`)
// rely on SIGPIPE's default. A caught signal is reset to the default by
// exec, so the command starts with SIGPIPE as it should. The channel is never
// read: delivery to a full channel is dropped, and nothing is to be done.
func survivePipes() {
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
}
