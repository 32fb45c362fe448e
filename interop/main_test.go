package interop

import (
	"testing"

	"github.com/zklock/zklock/cmd"
	"github.com/zklock/zklock/internal/testkit/zktest"
	"github.com/zklock/zklock/internal/testkit/zktest/zkcli"
)

// lazy is the real ZooKeeper that every test in this package shares,
// started by the first test that needs it.
var lazy = zktest.Lazy{Roots: []string{root}}

// root is the parent of the tests' lock paths, a plain node (see
// zktest.Lazy.Roots).
const root = "/interop"

// server is the shared server; under -short the test is skipped.
func server(t testing.TB) *zktest.Cluster {
	t.Helper()
	return lazy.Need(t)
}

func TestMain(m *testing.M) {
	// The test binary doubles as the zklock command on PATH.
	zkcli.Main(m, "zklock", cmd.Main, &lazy, nil)
}
