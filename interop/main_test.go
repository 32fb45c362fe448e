package interop

import (
	"testing"

	"github.com/zklock/zklock/cmd"
	"github.com/zklock/zklock/internal/zktest"
)

// server is the real ZooKeeper that every test in this package shares.
var server *zktest.Cluster

func TestMain(m *testing.M) {
	// The test binary doubles as the zklock command on PATH.
	zktest.MainWithCLI(m, "zklock", cmd.Main, func(c *zktest.Cluster) { server = c }, nil)
}
