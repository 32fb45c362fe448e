// Command zklock runs a command while holding a lock in Apache ZooKeeper.
package main

import (
	"os"

	"github.com/zklock/zklock/cmd"
)

func main() { os.Exit(cmd.Main()) }
