//go:build linux

// Command zklock-bench is the benchmark driver behind scripts/bench.sh; see
// package internal/testkit/bench.
package main

import (
	"os"

	"github.com/zklock/zklock/internal/testkit/bench"
)

func main() { os.Exit(bench.Main(os.Args[1:])) }
