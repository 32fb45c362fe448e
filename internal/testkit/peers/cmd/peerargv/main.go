// Command peerargv prints the command line of a lock-client runner, one
// argument per line, for scripts (such as benchmarks) that run the runners
// themselves:
//
//	mapfile -t CURATOR < <(go run ./internal/testkit/peers/cmd/peerargv curator)
//	"${CURATOR[@]}" --servers 127.0.0.1:2181 --path /locks/x -- true
//
// It builds the Curator runner first if needed. It exits 1, saying which
// Debian package is missing, when a runner's prerequisites are not
// installed, and 2 on a usage error.
package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/zklock/zklock/internal/testkit/peers"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: peerargv curator|kazoo")
		os.Exit(2)
	}
	var argv []string
	var err error
	switch os.Args[1] {
	case "curator":
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		argv, err = peers.CuratorArgv(ctx)
		cancel()
	case "kazoo":
		argv, err = peers.KazooArgv()
	default:
		fmt.Fprintln(os.Stderr, "usage: peerargv curator|kazoo")
		os.Exit(2)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println(strings.Join(argv, "\n"))
}
