// Command zklock runs a command while holding a lock in Apache ZooKeeper.
package main

import (
	"os"

	"github.com/zklock/zklock/cmd"
	_ "github.com/zklock/zklock/internal/startup" // before anything else runs
)

func main() { os.Exit(cmd.Main()) }
