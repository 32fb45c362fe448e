// Command zklock-watchdog is zklock's watchdog: the dead man's switch that
// kills a command's process group when zklock stops renewing its deadlines
// or dies (see lockexec.Watchdog). zklock starts it from beside its own
// executable, where the packages install it; it is not meant to be run by
// hand, and does nothing unless zklock started it. Where it is missing,
// zklock starts its own executable in its place, which runs the same code
// after a longer start-up.
package main

import (
	"os"

	"github.com/zklock/zklock/internal/deadman"
)

func main() {
	if !deadman.Is() {
		os.Stderr.WriteString("zklock-watchdog: started by zklock only, which finds it beside its own executable\n")
		os.Exit(2)
	}
	os.Exit(deadman.Main())
}
