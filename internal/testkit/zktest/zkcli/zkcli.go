// Package zkcli is the TestMain of packages whose tests run zklock as a
// command-line program against a real ZooKeeper. It is apart from zktest
// because it needs testing and testscript, which zktest's other users (the
// benchmark driver) must not link.
package zkcli

import (
	"fmt"
	"os"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/zklock/zklock/internal/testkit/zktest"
)

// withServer runs one package's tests, and then stops the servers they
// started, for Main.
type withServer struct {
	m      *testing.M
	server *zktest.Lazy
	done   func()
}

func (w withServer) Run() (code int) {
	zktest.UnignoreSignals()
	check, err := collectRaces(os.Stderr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "zkcli:", err)
		return 1
	}
	defer func() {
		if check() > 0 && code == 0 {
			code = 1
		}
	}()
	defer w.server.Stop()
	if w.done != nil {
		defer w.done()
	}
	return w.m.Run()
}

// Main is the TestMain of a package whose tests run a command-line
// program: testscript puts a copy of the test binary named name on PATH,
// and run under that name the binary is the program (run). The package's
// shared server is started by the first test that needs it (server.Need)
// and stopped after the tests; done, if set, runs after them too. It does
// not return.
func Main(m *testing.M, name string, run func() int, server *zktest.Lazy, done func()) {
	testscript.Main(withServer{m: m, server: server, done: done}, map[string]func(){
		name: func() { os.Exit(run()) },
	})
}
