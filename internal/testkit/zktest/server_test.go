package zktest

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
)

func TestStandaloneKillRestart(t *testing.T) {
	ctx := testCtx(t)
	s := shared(t).Server(0)
	if mode, err := s.Mode(ctx); err != nil || mode != "standalone" {
		t.Fatalf("mode %q, %v", mode, err)
	}
	c, _ := connect(t, []string{s.Addr()}, 10*time.Second)
	if _, err := c.Create("/survives-restart", []byte("v"), 0, acl); err != nil {
		t.Fatal(err)
	}
	eph, err := c.Create("/eph-survives-restart", nil, zk.FlagEphemeral, acl)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Delete(eph, -1)
	defer c.Delete("/survives-restart", -1)

	pid := s.Pid()
	addr := s.Addr()
	if err := s.Kill(); err != nil {
		t.Fatal(err)
	}
	if s.Running() || s.Pid() != 0 {
		t.Fatal("server still running after Kill")
	}
	if processExists(pid) {
		t.Fatalf("process %d not reaped after Kill", pid)
	}
	if err := s.Kill(); err != nil {
		t.Fatalf("second Kill: %v", err)
	}
	if _, err := fourLetter(ctx, addr, "ruok"); err == nil {
		t.Fatal("killed server still answers")
	}

	t0 := time.Now()
	if err := s.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	t.Logf("restart took %v", time.Since(t0))
	if s.Addr() != addr || !s.Running() {
		t.Fatalf("after restart: addr %s running %v", s.Addr(), s.Running())
	}
	// Persistent data and, because the session had not expired, the
	// client's session and its ephemeral node survive a crash: the
	// server restores the session with a whole timeout. They are read
	// by a new client: the one that made them reconnects on go-zookeeper's
	// own schedule, and beside stress-ng it once did not in 60 s, while
	// the server answered everyone else, so the session then expired and
	// the test said nothing of the server's data.
	fresh, _ := connect(t, []string{s.Addr()}, 10*time.Second)
	for _, p := range []string{"/survives-restart", eph} {
		if ok, _, err := fresh.Exists(p); err != nil || !ok {
			t.Fatalf("%s lost across restart: %v %v; the server's log ends:\n%s", p, ok, err, tailFile(s.LogPath(), 0, 40))
		}
	}

	// Restart of a running server stops it first.
	pid = s.Pid()
	if err := s.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	if s.Pid() == pid || processExists(pid) {
		t.Fatalf("Restart of a running server did not replace process %d", pid)
	}
}

func TestEnsemble(t *testing.T) {
	ctx := testCtx(t)
	e := sharedEnsemble(t)
	if e.Len() != 3 || len(e.Addrs()) != 3 || strings.Count(e.ConnectString(), ",") != 2 {
		t.Fatalf("connect string %q", e.ConnectString())
	}
	leaders := 0
	for i := 0; i < e.Len(); i++ {
		s := e.Server(i)
		if s.ID() != i+1 {
			t.Fatalf("server %d has ID %d", i, s.ID())
		}
		mode, err := s.Mode(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if mode == "leader" {
			leaders++
		} else if mode != "follower" {
			t.Fatalf("server %d mode %q", s.ID(), mode)
		}
	}
	if leaders != 1 {
		t.Fatalf("%d leaders", leaders)
	}

	c, _ := connect(t, e.Addrs(), 10*time.Second)
	if _, err := c.Create("/replicated", []byte("r"), 0, acl); err != nil {
		t.Fatal(err)
	}
	defer c.Delete("/replicated", -1)
	for _, s := range e.Servers() {
		cs, _ := connect(t, []string{s.Addr()}, 4*time.Second)
		if _, err := cs.Sync("/replicated"); err != nil {
			t.Fatal(err)
		}
		if ok, _, err := cs.Exists("/replicated"); err != nil || !ok {
			t.Fatalf("server %d: exists %v %v", s.ID(), ok, err)
		}
		cs.Close()
	}

	// Kill the leader: the others elect a new one and keep serving.
	old, err := e.Leader(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	if err := old.Kill(); err != nil {
		t.Fatal(err)
	}
	nl, err := e.Leader(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if nl == old {
		t.Fatal("killed server still leader")
	}
	t.Logf("new leader %d elected %v after killing %d", nl.ID(), time.Since(t0), old.ID())
	if err := e.WaitServing(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Set("/replicated", []byte("after"), -1); err != nil {
		t.Fatalf("write after leader change: %v", err)
	}

	// The old leader comes back, catches up, and joins as a follower.
	t0 = time.Now()
	if err := old.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	t.Logf("old leader rejoined in %v", time.Since(t0))
	if mode, err := old.Mode(ctx); err != nil || mode != "follower" {
		t.Fatalf("restarted server: %q %v", mode, err)
	}
	cs, _ := connect(t, []string{old.Addr()}, 4*time.Second)
	cs.Sync("/replicated")
	if b, _, err := cs.Get("/replicated"); err != nil || string(b) != "after" {
		t.Fatalf("restarted server has %q, %v", b, err)
	}
	if err := e.WaitServing(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestLocateErrors(t *testing.T) {
	t.Setenv("ZOOKEEPER_HOME", t.TempDir())
	_, err := Locate()
	if err == nil || !strings.Contains(err.Error(), "ZOOKEEPER_HOME") {
		t.Fatalf("got %v", err)
	}
	_, err = StartStandalone(context.Background(), Options{})
	if err == nil || !strings.Contains(err.Error(), "no zookeeper-*.jar") {
		t.Fatalf("got %v", err)
	}
	if _, err := debianClasspath(t.TempDir()); err == nil || !strings.Contains(err.Error(), "zookeeper.jar") {
		t.Fatalf("got %v", err)
	}
}

func TestLocateHome(t *testing.T) {
	home := t.TempDir()
	os.MkdirAll(filepath.Join(home, "lib"), 0o755)
	os.MkdirAll(filepath.Join(home, "conf"), 0o755)
	for _, f := range []string{"lib/zookeeper-3.8.4.jar", "lib/zookeeper-jute-3.8.4.jar", "lib/logback-core-1.2.13.jar"} {
		os.WriteFile(filepath.Join(home, f), nil, 0o644)
	}
	t.Setenv("ZOOKEEPER_HOME", home)
	inst, err := Locate()
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		filepath.Join(home, "conf"),
		filepath.Join(home, "lib/logback-core-1.2.13.jar"),
		filepath.Join(home, "lib/zookeeper-3.8.4.jar"),
		filepath.Join(home, "lib/zookeeper-jute-3.8.4.jar"),
	}
	if strings.Join(inst.Classpath, ":") != strings.Join(want, ":") {
		t.Fatalf("classpath %v", inst.Classpath)
	}
}

// A JVM that exits at once: the error must say so and quote its output.
func TestStartFailureQuotesLog(t *testing.T) {
	dir := t.TempDir()
	fake := filepath.Join(dir, "java")
	script := "#!/bin/sh\nfor i in $(seq 1 40); do echo \"fake jvm line $i\" >&2; done\nexit 3\n"
	if err := os.WriteFile(fake, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	base := t.TempDir()
	_, err := StartStandalone(context.Background(), Options{
		Install: &Install{Java: fake, Classpath: []string{"x.jar"}},
		BaseDir: base,
	})
	if err == nil {
		t.Fatal("start with a failing JVM succeeded")
	}
	msg := err.Error()
	if !strings.Contains(msg, "exited during start-up") || !strings.Contains(msg, "exit status 3") ||
		!strings.Contains(msg, "fake jvm line 40") || !strings.Contains(msg, "fake jvm line 21") ||
		strings.Contains(msg, "fake jvm line 20\n") {
		t.Fatalf("error does not quote the last 20 log lines:\n%s", msg)
	}
}

// A real server rejecting its configuration: the log tail says why.
func TestStartFailureRealServer(t *testing.T) {
	NeedServer(t)
	_, err := StartStandalone(context.Background(), Options{
		ExtraConfig: map[string]string{"tickTime": "not-a-number"},
	})
	if err == nil {
		t.Fatal("start with a broken config succeeded")
	}
	if !strings.Contains(err.Error(), "not-a-number") {
		t.Fatalf("error does not explain the failure:\n%v", err)
	}
}

func TestConfig(t *testing.T) {
	o := Options{ExtraConfig: map[string]string{"maxClientCnxns": "7", "zz.extra": "1"}}.withDefaults()
	cfg := o.config("/d", 1234, []string{"127.0.0.1:1:2", "127.0.0.1:3:4"})
	for _, want := range []string{
		"tickTime=200\n", "minSessionTimeout=400\n", "maxSessionTimeout=60000\n",
		"4lw.commands.whitelist=*\n", "admin.enableServer=false\n", "clientPortAddress=127.0.0.1\n",
		"clientPort=1234\n", "dataDir=/d\n", "initLimit=20\n", "syncLimit=10\n",
		"server.1=127.0.0.1:1:2\n", "server.2=127.0.0.1:3:4\n", "maxClientCnxns=7\n", "zz.extra=1\n",
	} {
		if !strings.Contains(cfg, want) {
			t.Errorf("config lacks %q:\n%s", want, cfg)
		}
	}
	if strings.Count(cfg, "maxClientCnxns=") != 1 {
		t.Errorf("override duplicated:\n%s", cfg)
	}
	flags := strings.Join(o.jvmFlags(), " ")
	if !strings.Contains(flags, "-Dznode.container.checkIntervalMs=100") {
		t.Errorf("flags: %s", flags)
	}
	if err := (Options{MinSessionTimeout: time.Minute, MaxSessionTimeout: time.Second}).withDefaults().validate(); err == nil {
		t.Error("min > max accepted")
	}
	if _, err := StartEnsemble(context.Background(), 1, Options{}); err == nil {
		t.Error("1-server ensemble accepted")
	}
}

func TestFreePorts(t *testing.T) {
	ports, err := freePorts(20)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int]bool{}
	low, ok := ephemeralLow()
	for _, p := range ports {
		if seen[p] {
			t.Fatalf("port %d handed out twice", p)
		}
		seen[p] = true
		if ok && low > portRangeLow+1000 && p >= low {
			t.Errorf("port %d is in the ephemeral range (from %d)", p, low)
		}
	}
}

const helperEnv = "ZKTEST_ORPHAN_HELPER_DIR"

// runOrphanHelper runs in a child test binary: it starts a server, reports
// the JVM's pid and waits to be killed.
func runOrphanHelper() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := StartStandalone(ctx, Options{BaseDir: os.Getenv(helperEnv)})
	if err != nil {
		fmt.Println("ERR", err)
		os.Exit(1)
	}
	fmt.Println("PID", c.Server(0).Pid())
	time.Sleep(time.Minute)
	os.Exit(1)
}

// If the test binary is killed outright, its servers must die with it.
func TestNoOrphanWhenTestBinaryKilled(t *testing.T) {
	NeedServer(t)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"="+t.TempDir())
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("helper: %v", err)
	}
	pidStr, ok := strings.CutPrefix(strings.TrimSpace(line), "PID ")
	if !ok {
		t.Fatalf("helper: %s", line)
	}
	pid, err := strconv.Atoi(pidStr)
	if err != nil || !ProcessAlive(pid) {
		t.Fatalf("helper reported pid %q (%v), not running", pidStr, err)
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	Eventually(t, 10*time.Second, "JVM of killed test binary to die", func() bool { return !ProcessAlive(pid) })
}

// Restart waits for ctx; the error says what the server was doing.
func TestRestartHonoursContext(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Millisecond)
	defer cancel()
	time.Sleep(2 * time.Millisecond)
	s := shared(t).Server(0)
	err := s.Restart(ctx)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("got %v", err)
	}
	// Leave the shared server serving for other tests.
	if err := s.Restart(testCtx(t)); err != nil {
		t.Fatal(err)
	}
}

// A port taken between choosing it and the JVM binding it: the start is
// retried on fresh ports.
func TestStartRetriesBindClash(t *testing.T) {
	NeedServer(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	taken := ln.Addr().(*net.TCPAddr).Port
	calls := 0
	pickPorts = func(n int) ([]int, error) {
		calls++
		if calls == 1 {
			return []int{taken}, nil
		}
		return freePorts(n)
	}
	defer func() { pickPorts = freePorts }()
	c, err := StartStandalone(testCtx(t), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Stop()
	if calls != 2 || c.Server(0).Port() == taken {
		t.Fatalf("calls %d, port %d (taken %d)", calls, c.Server(0).Port(), taken)
	}
}

// The short container check interval is what lets tests assert that a
// lock's parent node does not outlive its last child.
func TestContainerReapedQuickly(t *testing.T) {
	c, _ := connect(t, []string{shared(t).Server(0).Addr()}, 4*time.Second)
	if _, err := c.CreateContainer("/reaped", nil, zk.FlagContainer, acl); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Create("/reaped/child", nil, 0, acl); err != nil {
		t.Fatal(err)
	}
	if err := c.Delete("/reaped/child", -1); err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	// Far below production's 60s interval, with room for a JVM on a
	// loaded machine to run its timer late.
	Eventually(t, 10*time.Second, "empty container to be deleted", func() bool {
		ok, _, err := c.Exists("/reaped")
		return err == nil && !ok
	})
	t.Logf("container reaped after %v", time.Since(t0))
}
