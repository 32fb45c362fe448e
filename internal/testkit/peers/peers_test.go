package peers

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zklock/zklock/internal/testkit/zktest"
)

// lazy is the real ZooKeeper the package's tests share, started by the
// first test that needs it.
var lazy = zktest.Lazy{Roots: []string{root}}

// root is the parent of the tests' paths, a plain node (see
// zktest.Lazy.Roots).
const root = "/peers"

// server is the shared server; under -short the test is skipped.
func server(t *testing.T) *zktest.Cluster {
	t.Helper()
	return lazy.Need(t)
}

func TestMain(m *testing.M) {
	code := m.Run()
	lazy.Stop()
	os.Exit(code)
}

func testPath(t *testing.T) string { return zktest.TestPath(t, root) }

// runnerArgv returns the argv of the named runner; a missing prerequisite
// fails the test.
func runnerArgv(t *testing.T, runner string) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	argv, err := Argv(ctx, runner)
	if err != nil {
		t.Fatal(err)
	}
	return argv
}

func runnerCmd(t *testing.T, runner string, args ...string) *exec.Cmd {
	t.Helper()
	argv := append(runnerArgv(t, runner), args...)
	return exec.Command(argv[0], argv[1:]...)
}

// stepScript is a command that, on its n-th run, creates in-n and then
// waits for out-n: the test inspects the server while the lock is held and
// then lets the command finish.
const stepScript = `n=$(( $(cat "$D/n" 2>/dev/null || echo 0) + 1 )); echo $n > "$D/n"; echo $$ > "$D/pid-$n"; touch "$D/in-$n"
while [ ! -e "$D/out-$n" ]; do sleep 0.01; done`

type stepped struct {
	dir    string
	cmd    *exec.Cmd
	stderr zktest.SyncBuffer
	done   chan error
}

func startStepped(t *testing.T, runner string, o Options) *stepped {
	t.Helper()
	s := &stepped{dir: t.TempDir(), done: make(chan error, 1)}
	s.cmd = runnerCmd(t, runner, o.Args("sh", "-c", stepScript)...)
	s.cmd.Env = append(os.Environ(), "D="+s.dir)
	s.cmd.Stderr = &s.stderr
	// A group of its own, so that the end of the test kills the command
	// the runner started too: the step script waits for a file for ever,
	// and with the stderr pipe open Wait would wait with it.
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	s.cmd.WaitDelay = 5 * time.Second
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { s.done <- s.cmd.Wait() }()
	t.Cleanup(func() {
		syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
		<-s.done
		s.done <- nil
	})
	return s
}

func (s *stepped) inside(n int) bool {
	_, err := os.Stat(filepath.Join(s.dir, "in-"+strconv.Itoa(n)))
	return err == nil
}

func (s *stepped) waitIn(t *testing.T, n int, within time.Duration) {
	t.Helper()
	zktest.Eventually(t, within, fmt.Sprintf("run %d of the command to start", n), func() bool { return s.inside(n) })
}

func (s *stepped) finish(t *testing.T, n int) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(s.dir, "out-"+strconv.Itoa(n)), nil, 0o644); err != nil {
		t.Fatal(err)
	}
}

// exit waits for the runner and returns its exit code.
func (s *stepped) exit(t *testing.T) int {
	t.Helper()
	select {
	case err := <-s.done:
		s.done <- err
		return zktest.ExitCodeT(t, err)
	case <-time.After(60 * time.Second):
		t.Fatalf("runner still running; stderr: %s", s.stderr.String())
		return -1
	}
}

var (
	uuidRE    = `[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`
	curatorRE = func(infix string) *regexp.Regexp {
		return regexp.MustCompile(`^_c_` + uuidRE + `-` + regexp.QuoteMeta(infix) + `[0-9]{10}$`)
	}
	kazooRE = func(infix string) *regexp.Regexp {
		return regexp.MustCompile(`^[0-9a-f]{32}` + regexp.QuoteMeta(infix) + `[0-9]{10}$`)
	}
)

// TestNodeLayout runs each recipe of each runner and checks, while the
// command runs, the node it holds the lock with: its name, its data, and
// that a second repeat uses a new node in the same session.
func TestNodeLayout(t *testing.T) {
	cases := []struct {
		name   string
		runner string
		o      Options
		sub    string         // where the contender node lives, below the path
		re     *regexp.Regexp // its name
		data   string         // its data; "IP" for an IP address
	}{
		{"curator/mutex", "curator", Options{Data: "curator-m"}, "", curatorRE("lock-"), "curator-m"},
		{"curator/mutex-default-data", "curator", Options{}, "", curatorRE("lock-"), "IP"},
		{"curator/read", "curator", Options{Kind: Read, Data: "curator-r"}, "", curatorRE("__READ__"), "curator-r"},
		{"curator/write", "curator", Options{Kind: Write, Data: "curator-w"}, "", curatorRE("__WRIT__"), "curator-w"},
		{"curator/semaphore", "curator", Options{Kind: Semaphore, Limit: 2, Data: "curator-s"}, "leases", curatorRE("lease-"), "curator-s"},
		{"kazoo/mutex", "kazoo", Options{Data: "kazoo-m"}, "", kazooRE("__lock__"), "kazoo-m"},
		{"kazoo/mutex-no-identifier", "kazoo", Options{}, "", kazooRE("__lock__"), ""},
		{"kazoo/read", "kazoo", Options{Kind: Read, Data: "kazoo-r"}, "", kazooRE("__rlock__"), "kazoo-r"},
		{"kazoo/write", "kazoo", Options{Kind: Write, Data: "kazoo-w"}, "", kazooRE("__lock__"), "kazoo-w"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			conn := zktest.DialT(t, server(t).Addrs())
			o := tc.o
			o.Servers, o.Path, o.Repeat = server(t).ConnectString(), testPath(t), 2
			s := startStepped(t, tc.runner, o)
			dir := o.Path
			if tc.sub != "" {
				dir += "/" + tc.sub
			}
			var prevNode string
			var prevOwner int64
			for n := 1; n <= 2; n++ {
				s.waitIn(t, n, 20*time.Second)
				ch, _, err := conn.Children(dir)
				if err != nil {
					t.Fatal(err)
				}
				if len(ch) != 1 || !tc.re.MatchString(ch[0]) {
					t.Fatalf("run %d: children of %s are %q, want one matching %s", n, dir, ch, tc.re)
				}
				data, st, err := conn.Get(dir + "/" + ch[0])
				if err != nil {
					t.Fatal(err)
				}
				if tc.data == "IP" {
					if resolves := hostResolves(); resolves && net.ParseIP(string(data)) == nil {
						t.Errorf("data of %s is %q, want Curator's default, an IP address", ch[0], data)
					} else if !resolves && len(data) != 0 {
						t.Errorf("data of %s is %q, want Curator's default on a host whose name does not resolve: none", ch[0], data)
					}
				} else if string(data) != tc.data {
					t.Errorf("data of %s is %q, want %q", ch[0], data, tc.data)
				}
				if st.EphemeralOwner == 0 {
					t.Errorf("%s is not ephemeral", ch[0])
				}
				if tc.sub == "leases" {
					// InterProcessSemaphoreV2 holds the mutex <path>/locks only
					// while it gets its lease (and the server reaps the empty
					// container).
					locks, _, err := conn.Children(o.Path + "/locks")
					if (err != nil && !errors.Is(err, zk.ErrNoNode)) || len(locks) != 0 {
						t.Errorf("%s/locks: children %q (%v), want none", o.Path, locks, err)
					}
				}
				if n == 2 {
					if ch[0] == prevNode {
						t.Errorf("the second repeat reused node %s", ch[0])
					}
					if st.EphemeralOwner != prevOwner {
						t.Errorf("the repeats used sessions %#x and %#x, want one", prevOwner, st.EphemeralOwner)
					}
				}
				prevNode, prevOwner = ch[0], st.EphemeralOwner
				s.finish(t, n)
			}
			if code := s.exit(t); code != 0 {
				t.Fatalf("exit %d; stderr: %s", code, s.stderr.String())
			}
			if s.stderr.String() != "" {
				t.Errorf("the runner wrote to stderr: %s", s.stderr.String())
			}
		})
	}
}

// TestCuratorSemaphoreWaiter checks InterProcessSemaphoreV2's algorithm: a
// contender holds the mutex <path>/locks while it waits, with its lease node
// already in <path>/leases; it has the semaphore once the leases number at
// most the limit, and then releases the mutex.
func TestCuratorSemaphoreWaiter(t *testing.T) {
	t.Parallel()
	conn := zktest.DialT(t, server(t).Addrs())
	path := testPath(t)
	o := Options{Servers: server(t).ConnectString(), Path: path, Kind: Semaphore, Limit: 1}
	holder := startStepped(t, "curator", o)
	holder.waitIn(t, 1, 20*time.Second)
	waiter := startStepped(t, "curator", o)
	var locks, leases []string
	zktest.Eventually(t, 20*time.Second, "the waiter to hold the mutex with its lease queued", func() bool {
		locks, _, _ = conn.Children(path + "/locks")
		leases, _, _ = conn.Children(path + "/leases")
		return len(locks) == 1 && len(leases) == 2
	})
	if !curatorRE("lock-").MatchString(locks[0]) {
		t.Errorf("%s/locks/%s is not an InterProcessMutex node", path, locks[0])
	}
	for _, l := range leases {
		if !curatorRE("lease-").MatchString(l) {
			t.Errorf("%s/leases/%s is not a lease node", path, l)
		}
	}
	if waiter.inside(1) {
		t.Fatal("the waiter runs while the only lease is taken")
	}
	holder.finish(t, 1)
	waiter.waitIn(t, 1, 10*time.Second)
	locks, _, err := conn.Children(path + "/locks")
	if (err != nil && !errors.Is(err, zk.ErrNoNode)) || len(locks) != 0 {
		t.Errorf("the semaphore holder still holds %s/locks: %q (%v)", path, locks, err)
	}
	waiter.finish(t, 1)
	for _, s := range []*stepped{holder, waiter} {
		if code := s.exit(t); code != 0 {
			t.Errorf("exit %d; stderr: %s", code, s.stderr.String())
		}
	}
}

// TestExitStatus checks both runners' exit statuses: the command's last
// status, 128+N for a signal, 127 for a command that is not found, 2 for
// usage errors.
func TestExitStatus(t *testing.T) {
	for _, runner := range []string{"curator", "kazoo"} {
		t.Run(runner, func(t *testing.T) {
			t.Parallel()
			base := Options{Servers: server(t).ConnectString(), Path: testPath(t)}
			cases := []struct {
				name string
				args []string
				want int
				msg  string // in stderr
			}{
				{"last-status", func() []string {
					o := base
					o.Repeat = 3
					return o.Args("sh", "-c", `echo x >> "$D/runs"; exit $((10 + $(wc -l < "$D/runs")))`)
				}(), 13, ""},
				{"signal", base.Args("sh", "-c", `kill -TERM $$`), 128 + 15, ""},
				{"not-found", base.Args("/nonexistent/command"), 127, "/nonexistent/command"},
				{"no-command", base.Args(), ExitUsage, "no command"},
				{"unknown-flag", append([]string{"--bogus", "1"}, base.Args("true")...), ExitUsage, "unknown flag --bogus"},
				{"limit-with-read", func() []string {
					o := base
					o.Kind, o.Limit = Read, 2
					return o.Args("true")
				}(), ExitUsage, "--limit"},
				{"relative-path", []string{"--servers", base.Servers, "--path", "x", "--", "true"}, ExitUsage, "--path"},
			}
			if runner == "kazoo" {
				o := base
				o.Kind, o.Limit = Semaphore, 2
				cases = append(cases, struct {
					name string
					args []string
					want int
					msg  string
				}{"semaphore", o.Args("true"), ExitUsage, "does not interoperate"})
			}
			for _, tc := range cases {
				dir := t.TempDir()
				c := runnerCmd(t, runner, tc.args...)
				c.Env = append(os.Environ(), "D="+dir)
				var stderr bytes.Buffer
				c.Stderr = &stderr
				code := zktest.ExitCodeT(t, c.Run())
				if code != tc.want {
					t.Errorf("%s: exit %d, want %d; stderr: %s", tc.name, code, tc.want, stderr.String())
				}
				if !strings.Contains(stderr.String(), tc.msg) {
					t.Errorf("%s: stderr %q does not mention %q", tc.name, stderr.String(), tc.msg)
				}
			}
		})
	}
}

// TestSignal: a runner that gets SIGTERM while its command runs stops the
// command, and one that gets it while waiting leaves the queue; either way
// it exits 143 and its node is gone at once, not after the session timeout.
func TestSignal(t *testing.T) {
	for _, runner := range []string{"curator", "kazoo"} {
		t.Run(runner, func(t *testing.T) {
			t.Parallel()
			conn := zktest.DialT(t, server(t).Addrs())
			// 40s: half of it is room for a JVM to stop on a loaded
			// machine, and a node left to expire stays for all of it.
			o := Options{Servers: server(t).ConnectString(), Path: testPath(t), SessionTimeout: 40 * time.Second}
			holder := startStepped(t, runner, o)
			holder.waitIn(t, 1, 20*time.Second)
			waiter := startStepped(t, runner, o)
			zktest.Eventually(t, 20*time.Second, "the waiter to queue", func() bool {
				ch, _, _ := conn.Children(o.Path)
				return len(ch) == 2
			})
			b, err := os.ReadFile(filepath.Join(holder.dir, "pid-1"))
			if err != nil {
				t.Fatal(err)
			}
			pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
			signalled := time.Now()
			for name, s := range map[string]*stepped{"holder": holder, "waiter": waiter} {
				start := time.Now()
				s.cmd.Process.Signal(syscall.SIGTERM)
				if code := s.exit(t); code != 128+int(syscall.SIGTERM) {
					t.Errorf("%s: exit %d after SIGTERM, want 143; stderr: %s", name, code, s.stderr.String())
				}
				// Half the session timeout: a runner that left its
				// node to expire would miss it, a JVM or Python slow to
				// stop on a loaded machine does not.
				if d := time.Since(start); d > o.SessionTimeout/2 {
					t.Errorf("%s took %s to exit after SIGTERM", name, d)
				}
			}
			// Measured from the first signal: a node left to expire with
			// its session would still be there.
			zktest.Eventually(t, time.Until(signalled.Add(o.SessionTimeout*3/4)), "the runners' nodes to go", func() bool {
				ch, _, err := conn.Children(o.Path)
				return (err == nil && len(ch) == 0) || errors.Is(err, zk.ErrNoNode)
			})
			zktest.Eventually(t, 10*time.Second, "the holder's command to end", func() bool {
				return syscall.Kill(pid, 0) != nil
			})
		})
	}
}

// TestKazooReadLockQueue is the queue of python-zk/kazoo#649: a writer
// holds, a reader waits, a second writer queues behind the reader. Once the
// first writer leaves, the reader must run, then the second writer. Kazoo
// 2.8's own ReadLock would wait for the second writer here, which waits for
// the reader: a deadlock.
func TestKazooReadLockQueue(t *testing.T) {
	conn := zktest.DialT(t, server(t).Addrs())
	path := testPath(t)
	o := Options{Servers: server(t).ConnectString(), Path: path}
	w, r := o, o
	w.Kind, r.Kind = Write, Read
	w1 := startStepped(t, "kazoo", w)
	w1.waitIn(t, 1, 10*time.Second)
	rd := startStepped(t, "kazoo", r)
	queued := func(n int) func() bool {
		return func() bool { ch, _, err := conn.Children(path); return err == nil && len(ch) == n }
	}
	zktest.Eventually(t, 10*time.Second, "the reader to queue", queued(2))
	w3 := startStepped(t, "kazoo", w)
	zktest.Eventually(t, 10*time.Second, "the second writer to queue", queued(3))
	w1.finish(t, 1)
	rd.waitIn(t, 1, 10*time.Second)
	if w3.inside(1) {
		t.Fatal("the second writer runs together with the reader")
	}
	rd.finish(t, 1)
	w3.waitIn(t, 1, 10*time.Second)
	w3.finish(t, 1)
	for name, s := range map[string]*stepped{"writer 1": w1, "reader": rd, "writer 2": w3} {
		if code := s.exit(t); code != 0 {
			t.Errorf("%s: exit %d; stderr: %s", name, code, s.stderr.String())
		}
	}
}

// TestMissing: a missing prerequisite is an error that names the Debian
// package to install.
func TestMissing(t *testing.T) {
	saveDir, savePy := javaDir, systemPython
	curator.Lock()
	saveCur := curator.argv
	curator.argv = nil
	curator.Unlock()
	kazoo.Lock()
	saveKz := kazoo.argv
	kazoo.argv = nil
	kazoo.Unlock()
	t.Cleanup(func() {
		javaDir, systemPython = saveDir, savePy
		curator.argv, kazoo.argv = saveCur, saveKz
	})

	javaDir = t.TempDir()
	_, err := CuratorArgv(context.Background())
	var me *MissingError
	if !errors.As(err, &me) || me.Package != "libcurator-recipes-java" ||
		!strings.Contains(err.Error(), "apt-get install libcurator-recipes-java") {
		t.Errorf("CuratorArgv without jars: %v, want a MissingError naming libcurator-recipes-java", err)
	}

	systemPython = filepath.Join(t.TempDir(), "python3")
	if _, err := KazooArgv(); !errors.As(err, &me) || me.Package != "python3" {
		t.Errorf("KazooArgv without python3: %v, want a MissingError naming python3", err)
	}
	// A python3 that cannot import kazoo.
	systemPython = "/bin/false"
	if _, err := KazooArgv(); !errors.As(err, &me) || me.Package != "python3-kazoo" {
		t.Errorf("KazooArgv without Kazoo: %v, want a MissingError naming python3-kazoo", err)
	}
}

func TestArgs(t *testing.T) {
	o := Options{Servers: "h:1", Path: "/p", Kind: Semaphore, Limit: 3, SessionTimeout: 4 * time.Second, Repeat: 5, Data: "d"}
	got := strings.Join(o.Args("sh", "-c", "x"), " ")
	want := "--servers h:1 --path /p --kind semaphore --limit 3 --session-timeout-ms 4000 --repeat 5 --data d -- sh -c x"
	if got != want {
		t.Errorf("Args: %s\nwant: %s", got, want)
	}
	if got := strings.Join((Options{Servers: "h:1", Path: "/p"}).Args("true"), " "); got != "--servers h:1 --path /p -- true" {
		t.Errorf("Args with defaults: %s", got)
	}
}

// hostResolves reports whether this host's name resolves to an address.
// Curator's default node data is the address Java's getLocalHost gives,
// and no data at all where the name does not resolve (a bare chroot or
// container whose /etc/hosts leaves the host out).
func hostResolves() bool {
	h, err := os.Hostname()
	if err != nil {
		return false
	}
	addrs, err := net.LookupHost(h)
	return err == nil && len(addrs) > 0
}
