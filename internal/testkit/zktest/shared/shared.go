// Package shared gives the tests of one package a ZooKeeper server they
// share, started on first use, and clients of it. A test that calls
// Server, Client or Raw needs a server: under go test -short it is
// skipped, so the fast lane starts no JVM.
//
//	func TestMain(m *testing.M) { shared.Main(m) }
//
//	func TestX(t *testing.T) {
//		c := shared.Client(t) // starts the package's server, once
//		…
//	}
package shared

import (
	"context"
	"flag"
	"os"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zklock/zklock/internal/testkit/zktest"
	"github.com/zklock/zklock/zkconn"
)

// root is the parent of every test's path, a plain node (see Lazy.Roots).
const root = "/t"

// server is this test binary's shared server.
var server = zktest.Lazy{Roots: []string{root}}

// ConnectString is the shared server's connect string, starting it on
// first use: for a runnable Example, which has no testing.T. A package
// whose examples need it calls SkipExamplesWhenShort in its TestMain.
func ConnectString() (string, error) {
	c, err := server.Get()
	if err != nil {
		return "", err
	}
	return c.ConnectString(), nil
}

// SkipExamplesWhenShort makes go test -short skip the package's examples,
// as it skips its tests that need a server: an example cannot skip itself.
// Call it in TestMain, before Main.
func SkipExamplesWhenShort() {
	if !flag.Parsed() {
		flag.Parse()
	}
	if !testing.Short() {
		return
	}
	skip := "^Example"
	if prev := flag.Lookup("test.skip").Value.String(); prev != "" {
		skip = prev + "|" + skip
	}
	if err := flag.Set("test.skip", skip); err != nil {
		panic(err)
	}
}

// Main is a test package's TestMain: it runs the tests, then stops the
// server if one was started. It does not return.
func Main(m *testing.M) {
	code := m.Run()
	server.Stop()
	os.Exit(code)
}

// Server returns the package's server, starting it on first use. A server
// that cannot start fails the test; under -short the test is skipped.
func Server(t testing.TB) *zktest.Cluster {
	t.Helper()
	return server.Need(t)
}

// sessionTimeout is the clients' session timeout: short, so that a test
// that loses a session learns it quickly.
const sessionTimeout = 4 * time.Second

// Client is a zkconn client of the server, closed when the test ends.
func Client(t testing.TB) *zkconn.Client {
	t.Helper()
	return Dial(t, Server(t).ConnectString(), nil)
}

// Dial is a zkconn client of servers with auth, closed when the test ends.
func Dial(t testing.TB, servers string, auth *zkconn.Auth) *zkconn.Client {
	t.Helper()
	cs, err := zkconn.ParseConnString(servers)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := zkconn.Dial(ctx, zkconn.Options{ConnString: cs, SessionTimeout: sessionTimeout, Auth: auth})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// Raw is a plain go-zookeeper connection to the server, for looking at its
// state independently of the code under test; closed when the test ends.
func Raw(t testing.TB) *zk.Conn {
	t.Helper()
	return zktest.DialT(t, Server(t).Addrs())
}

// Ctx is a context that ends after d or with the test.
func Ctx(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// Dir gives a test a path of its own on the shared server, under the plain
// root node, for a tree of locks.
func Dir(t testing.TB) string { return zktest.TestPath(t, root) }

// Path gives a test a lock path of its own on the shared server.
func Path(t testing.TB) string { return Dir(t) + "/lock" }

// AssertGone proves nothing is left at path: the lock path and its parent
// containers are reaped by the server once empty.
func AssertGone(t testing.TB, path string) {
	t.Helper()
	conn := Raw(t)
	zktest.Eventually(t, 10*time.Second, path+" to be reaped", func() bool {
		ok, _, err := conn.Exists(path)
		return err == nil && !ok
	})
}
