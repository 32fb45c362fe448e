// Package zkcli is the TestMain of packages whose tests run zklock as a
// command-line program against a real ZooKeeper. It is apart from zktest
// because it needs testing and testscript, which zktest's other users (the
// benchmark driver) must not link.
package zkcli

import (
	"os"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/zklock/zklock/internal/zktest"
)

// withServer runs one package's tests with a server, for Main.
type withServer struct {
	m    *testing.M
	use  func(*zktest.Cluster)
	done func()
}

func (w withServer) Run() int {
	zktest.UnignoreSignals()
	if w.done != nil {
		defer w.done()
	}
	return zktest.RunStandalone(w.m, zktest.Options{}, w.use)
}

// Main is the TestMain of a package whose tests run a command-line
// program: testscript puts a copy of the test binary named name on PATH,
// and run under that name the binary is the program (run). Only the
// top-level test process starts the package's shared server (see
// zktest.RunStandalone); done, if set, runs after the tests. It does not
// return.
func Main(m *testing.M, name string, run func() int, use func(*zktest.Cluster), done func()) {
	testscript.Main(withServer{m: m, use: use, done: done}, map[string]func(){
		name: func() { os.Exit(run()) },
	})
}
