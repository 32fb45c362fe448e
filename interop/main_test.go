package interop

import (
	"testing"

	"github.com/zklock/zklock/cmd"
	"github.com/zklock/zklock/internal/zktest"
	"github.com/zklock/zklock/internal/zktest/zkcli"
)

// server is the real ZooKeeper that every test in this package shares.
var server *zktest.Cluster

func TestMain(m *testing.M) {
	// The test binary doubles as the zklock command on PATH.
	zkcli.Main(m, "zklock", cmd.Main, func(c *zktest.Cluster) { server = c }, nil)
}
