// Command manpages writes zklock's man pages, one per command (zklock.1,
// zklock-run.1, ...), generated from the cobra command tree so that they
// always say what --help says:
//
//	go run ./internal/manpages DIR
//
// It is a program of its own rather than a hidden zklock subcommand so that
// the man-page renderer (cobra/doc and its Markdown converter) stays out of
// the zklock binary: pages are made once, at release time, not on every
// host that runs zklock.
package main

import (
	"fmt"
	"os"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: go run ./internal/manpages DIR")
		os.Exit(64)
	}
	if err := generate(os.Args[1]); err != nil {
		fmt.Fprintf(os.Stderr, "manpages: %v\n", err)
		os.Exit(1)
	}
}
