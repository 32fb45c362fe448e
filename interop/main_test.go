package interop

import (
	"os"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
	"github.com/zklock/zklock/cmd"
	"github.com/zklock/zklock/internal/zktest"
)

// server is the real ZooKeeper that every test in this package shares.
var server *zktest.Cluster

// withServer starts the server only in the top-level test process, not when
// the test binary is re-executed as the zklock command.
type withServer struct{ m *testing.M }

func (w withServer) Run() int {
	return zktest.RunStandalone(w.m, zktest.Options{}, func(c *zktest.Cluster) { server = c })
}

func TestMain(m *testing.M) {
	// testscript puts a copy of this binary named "zklock" on PATH; run
	// under that name, it is zklock.
	testscript.Main(withServer{m}, map[string]func(){
		"zklock": func() { os.Exit(cmd.Main()) },
	})
}
