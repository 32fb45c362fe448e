package e2e

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/rogpeppe/go-internal/testscript"
	"github.com/zklock/zklock/cmd"
	"github.com/zklock/zklock/internal/testkit/zktest"
	"github.com/zklock/zklock/internal/testkit/zktest/zkcli"
)

// lazy is the real ZooKeeper every test in this package shares, started
// by the first test that needs it.
// cliRoot is the parent of the tests' lock paths, a plain node (see
// zktest.Lazy.Roots).
const cliRoot = "/cli"

var lazy = zktest.Lazy{Roots: []string{cliRoot}}

// server is the shared server; under -short the test is skipped.
func server(t testing.TB) *zktest.Cluster {
	t.Helper()
	return lazy.Need(t)
}

func TestMain(m *testing.M) {
	// The test binary doubles as the zklock command on PATH; the 3-node
	// ensemble, if a test started one, is stopped after the tests.
	zkcli.Main(m, "zklock", cmd.Main, &lazy, stopEnsemble)
}

var scriptSeq atomic.Int64

func TestScripts(t *testing.T) {
	srv := server(t)
	testscript.Run(t, testscript.Params{
		Dir:                 "../testdata/script",
		RequireExplicitExec: true,
		Setup: func(e *testscript.Env) error {
			e.Setenv("ZKLOCK_SERVERS", srv.ConnectString())
			// Each script locks under its own root.
			e.Setenv("LOCKROOT", fmt.Sprintf("/e2e/s%d", scriptSeq.Add(1)))
			e.Setenv("NO_COLOR", "1")
			return nil
		},
		Cmds: map[string]func(*testscript.TestScript, bool, []string){
			"exitcode":  cmdExitcode,
			"gone":      cmdGone,
			"absent":    cmdAbsent,
			"queued":    cmdQueued,
			"ephemeral": cmdEphemeral,
			"waitfile":  cmdWaitfile,
		},
	})
}

// exitcode N PROG [ARGS...] runs PROG and checks its exit code is N;
// stdout and stderr are kept for the next assertions.
func cmdExitcode(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: exitcode N prog [args...]")
	}
	want, err := strconv.Atoi(args[0])
	if err != nil {
		ts.Fatalf("exitcode: %v", err)
	}
	err = ts.Exec(args[1], args[2:]...)
	got := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		got = ee.ExitCode()
	} else if err != nil {
		ts.Fatalf("exitcode: %v", err)
	}
	if got != want {
		ts.Fatalf("%s exited %d, want %d\nstderr: %s", args[1], got, want, ts.ReadFile("stderr"))
	}
}

func rawConn(ts *testscript.TestScript) *zk.Conn {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := lazy.Get() // started by TestScripts
	if err != nil {
		ts.Fatalf("%v", err)
	}
	conn, err := zktest.Dial(ctx, c.Addrs())
	if err != nil {
		ts.Fatalf("%v", err)
	}
	return conn
}

// gone PATH waits (up to 10s) until PATH no longer exists on the server:
// zklock's parent nodes are containers, which the server reaps once empty.
// "! gone PATH" asserts PATH exists now.
func cmdGone(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 {
		ts.Fatalf("usage: gone PATH")
	}
	conn := rawConn(ts)
	defer conn.Close()
	if neg {
		if ok, _, err := conn.Exists(args[0]); err != nil || !ok {
			ts.Fatalf("%s does not exist (%v)", args[0], err)
		}
		return
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		ok, _, err := conn.Exists(args[0])
		if err == nil && !ok {
			return
		}
		if time.Now().After(deadline) {
			ch, _, _ := conn.Children(args[0])
			ts.Fatalf("%s is still there, children %v", args[0], ch)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// absent PATH asserts that PATH does not exist now: nothing was created
// there, not even an empty container that the server would never reap.
func cmdAbsent(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: absent PATH")
	}
	conn := rawConn(ts)
	defer conn.Close()
	if ok, _, err := conn.Exists(args[0]); err != nil || ok {
		ch, _, _ := conn.Children(args[0])
		ts.Fatalf("%s exists (children %v, %v)", args[0], ch, err)
	}
}

// queued PATH N waits (up to 10s) until PATH has exactly N children.
func cmdQueued(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: queued PATH N")
	}
	want, _ := strconv.Atoi(args[1])
	conn := rawConn(ts)
	defer conn.Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		ch, _, err := conn.Children(args[0])
		if (err == nil && len(ch) == want) || (want == 0 && errors.Is(err, zk.ErrNoNode)) {
			return
		}
		if time.Now().After(deadline) {
			ts.Fatalf("%s has children %v (%v), want %d", args[0], ch, err, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// ephemeral PATH creates PATH (and persistent parents) as an ephemeral node
// that lives until the script ends.
func cmdEphemeral(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: ephemeral PATH")
	}
	conn := rawConn(ts)
	ts.Defer(conn.Close)
	p := ""
	parts := strings.Split(args[0][1:], "/")
	for i, part := range parts {
		p += "/" + part
		flags := int32(zk.FlagContainer)
		var err error
		if i == len(parts)-1 {
			_, err = conn.Create(p, nil, zk.FlagEphemeral, zk.WorldACL(zk.PermAll))
		} else {
			_, err = conn.CreateContainer(p, nil, flags, zk.WorldACL(zk.PermAll))
		}
		if err != nil && !errors.Is(err, zk.ErrNodeExists) {
			ts.Fatalf("create %s: %v", p, err)
		}
	}
}

// waitfile FILE waits until FILE exists in the work directory: up to
// 30s, which only a starved machine needs. It exists as soon as a shell
// opens it for `>`, before anything is written, so a command whose file's
// content the script reads writes it elsewhere and renames it into place.
func cmdWaitfile(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: waitfile FILE")
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, err := os.Stat(ts.MkAbs(args[0])); err == nil {
			return
		}
		if time.Now().After(deadline) {
			ts.Fatalf("%s never appeared", args[0])
		}
		time.Sleep(20 * time.Millisecond)
	}
}
