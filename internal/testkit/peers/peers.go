// Package peers runs other ZooKeeper lock clients, unmodified, next to
// zklock: Apache Curator 5 (Java) and Kazoo (Python). The interoperability
// tests make them contend with zklock for the same lock path, and the
// benchmarks time them.
//
// Both runners take the same command line (see Options.Args):
//
//	RUNNER --servers HOSTS --path P [--kind mutex|read|write|semaphore] [--limit N]
//	       [--session-timeout-ms MS] [--repeat K] [--data TEXT] -- CMD [ARGS...]
//
// For each of K repeats a runner acquires the lock at P with its library's
// own recipe, runs CMD with inherited stdio, waits for it and releases the
// lock. All repeats share one session. The runner exits with CMD's last exit
// status, 2 on a usage error, 69 when it gets no session, 70 when a lock
// operation fails.
//
//	kind       Curator                              Kazoo
//	mutex      InterProcessMutex                    Lock
//	read       InterProcessReadWriteLock.readLock   ReadLock
//	write      InterProcessReadWriteLock.writeLock  WriteLock
//	semaphore  InterProcessSemaphoreV2(N)           refused (exit 2): not interoperable
//
// --data is the data of the nodes the runner creates: Curator's default
// data (otherwise the local IP address as text), Kazoo's identifier
// (otherwise empty).
//
// The prerequisites are Debian packages: libcurator-recipes-java (which
// pulls in Curator's framework and client, Guava, SLF4J and the ZooKeeper
// client jars) and a JDK (default-jdk-headless) for Curator; python3-kazoo
// for Kazoo, run by Debian's /usr/bin/python3. CuratorArgv and KazooArgv
// return a *MissingError naming the package when something is absent;
// callers are expected to fail, not skip. Scripts get the same command lines
// from `go run ./internal/testkit/peers/cmd/peerargv curator|kazoo`.
package peers

import (
	"bytes"
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/zklock/zklock/internal/testkit/javart"
)

//go:embed java/ZkPeer.java
var javaSource []byte

//go:embed python/zkpeer.py
var pythonSource []byte

// Lock kinds, for Options.Kind.
const (
	Mutex     = "mutex"
	Read      = "read"
	Write     = "write"
	Semaphore = "semaphore"
)

// Exit statuses of the runners themselves.
const (
	ExitUsage       = 2
	ExitUnavailable = 69
	ExitSoftware    = 70
)

// Options is a runner's command line.
type Options struct {
	// Servers is the connect string, host:port[,host:port...][/chroot].
	Servers string
	// Path is the lock path.
	Path string
	// Kind is Mutex (when empty), Read, Write or Semaphore.
	Kind string
	// Limit is the number of leases of a Semaphore (0: not given).
	Limit int
	// SessionTimeout is the session timeout to ask for (0: the runner's
	// default, 10s).
	SessionTimeout time.Duration
	// Repeat is how many times to take the lock and run the command (0: once).
	Repeat int
	// Data, when not empty, is the data of the runner's nodes.
	Data string
	// Revocable makes a Curator mutex, read or write lock revocable: a
	// revocation request stops the command, and the lock is released.
	// The Curator runner only.
	Revocable bool
}

// RevokeArgs is the Curator runner's arguments for asking the contender
// node to give up its place with Curator's Revoker.attemptRevoke.
func RevokeArgs(servers, node string) []string {
	return []string{"--servers", servers, "--revoke", node}
}

// Args is the runner's arguments for running command under o.
func (o Options) Args(command ...string) []string {
	a := []string{"--servers", o.Servers, "--path", o.Path}
	if o.Kind != "" {
		a = append(a, "--kind", o.Kind)
	}
	if o.Limit != 0 {
		a = append(a, "--limit", strconv.Itoa(o.Limit))
	}
	if o.SessionTimeout != 0 {
		a = append(a, "--session-timeout-ms", strconv.FormatInt(o.SessionTimeout.Milliseconds(), 10))
	}
	if o.Repeat != 0 {
		a = append(a, "--repeat", strconv.Itoa(o.Repeat))
	}
	if o.Data != "" {
		a = append(a, "--data", o.Data)
	}
	if o.Revocable {
		a = append(a, "--revocable")
	}
	a = append(a, "--")
	return append(a, command...)
}

// MissingError says that a prerequisite of a runner is not installed, and
// which Debian package provides it.
type MissingError struct {
	What    string // e.g. "the Curator recipes jar"
	Where   string // where it was looked for
	Package string // the Debian package that provides it
	Err     error  // the underlying failure, if any
}

func (e *MissingError) Error() string {
	s := fmt.Sprintf("peers: %s not found (%s); install the Debian package %s (apt-get install %s, or run scripts/install-deps.sh)",
		e.What, e.Where, e.Package, e.Package)
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

func (e *MissingError) Unwrap() error { return e.Err }

// Where the runners' prerequisites live; tests point them elsewhere.
var (
	javaDir      = javart.DebianDir
	systemPython = "/usr/bin/python3"
	cacheRoot    = filepath.Join(os.TempDir(), "zklock-peers-"+strconv.Itoa(os.Getuid()))
)

// curatorJars is the Curator runner's classpath, in /usr/share/java, with
// the package providing each jar. slf4j-nop is the logging binding: it
// silences Curator and the ZooKeeper client.
var curatorJars = []struct{ jar, pkg string }{
	{"curator-recipes", "libcurator-recipes-java"},
	{"curator-framework", "libcurator-framework-java"},
	{"curator-client", "libcurator-client-java"},
	{"guava", "libguava-java"},
	{"zookeeper", "libzookeeper-java"},
	{"zookeeper-jute", "libzookeeper-java"},
	{"slf4j-api", "libslf4j-java"},
	{"slf4j-nop", "libslf4j-java"},
}

var curator struct {
	sync.Mutex
	argv []string
}

// CuratorArgv returns the command that runs the Curator runner: java, its
// flags and classpath, and the class ZkPeer. The runner is compiled once
// per source version into a cache directory under os.TempDir(); ctx bounds
// the compilation.
func CuratorArgv(ctx context.Context) ([]string, error) {
	curator.Lock()
	defer curator.Unlock()
	if curator.argv != nil {
		return append([]string(nil), curator.argv...), nil
	}
	var cp []string
	for _, j := range curatorJars {
		p := filepath.Join(javaDir, j.jar+".jar")
		if _, err := os.Stat(p); err != nil {
			return nil, &MissingError{What: "the " + j.jar + " jar", Where: p, Package: j.pkg}
		}
		cp = append(cp, p)
	}
	javac, java, err := javart.JDK()
	if err != nil {
		return nil, &MissingError{What: "a JDK", Where: err.Error(), Package: "default-jdk-headless"}
	}
	javart.CheckNotShort("javac, for the Curator runner")
	classes, err := compile(ctx, javac, cp)
	if err != nil {
		return nil, err
	}
	argv := append([]string{java}, javart.StartupFlags()...)
	argv = append(argv, "-cp", strings.Join(append([]string{classes}, cp...), string(os.PathListSeparator)), "ZkPeer")
	curator.argv = argv
	return append([]string(nil), argv...), nil
}

// compile compiles ZkPeer.java into a directory named after a hash of the
// source, the compiler and the classpath, and returns that directory.
// Concurrent compilations (parallel test binaries) each build into a
// private directory and rename it into place; the first rename wins.
func compile(ctx context.Context, javac string, cp []string) (string, error) {
	h := sha256.New()
	h.Write(javaSource)
	fmt.Fprintf(h, "\x00%s\x00%s", javac, strings.Join(cp, ":"))
	dir := filepath.Join(cacheRoot, "curator-"+hex.EncodeToString(h.Sum(nil))[:16])
	if _, err := os.Stat(filepath.Join(dir, "ZkPeer.class")); err == nil {
		return dir, nil
	}
	if err := os.MkdirAll(cacheRoot, 0o755); err != nil {
		return "", fmt.Errorf("peers: %w", err)
	}
	tmp, err := os.MkdirTemp(cacheRoot, "build-")
	if err != nil {
		return "", fmt.Errorf("peers: %w", err)
	}
	defer os.RemoveAll(tmp)
	src := filepath.Join(tmp, "ZkPeer.java")
	if err := os.WriteFile(src, javaSource, 0o644); err != nil {
		return "", fmt.Errorf("peers: %w", err)
	}
	out := filepath.Join(tmp, "classes")
	// javac is a JVM too: the same start-up flags save it about a second.
	var args []string
	for _, f := range javart.StartupFlags() {
		args = append(args, "-J"+f)
	}
	args = append(args, "-nowarn", "-encoding", "UTF-8", "-d", out, "-cp", strings.Join(cp, string(os.PathListSeparator)), src)
	cmd := exec.CommandContext(ctx, javac, args...)
	var msg bytes.Buffer
	cmd.Stdout, cmd.Stderr = &msg, &msg
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("peers: compiling the Curator runner with %s: %w\n%s", javac, err, msg.Bytes())
	}
	if err := os.Rename(out, dir); err != nil {
		if _, serr := os.Stat(filepath.Join(dir, "ZkPeer.class")); serr != nil {
			return "", fmt.Errorf("peers: %w", err)
		}
	}
	return dir, nil
}

var kazoo struct {
	sync.Mutex
	argv []string
}

// KazooArgv returns the command that runs the Kazoo runner with Debian's
// /usr/bin/python3 (in isolated mode, so PYTHONPATH and user site-packages
// cannot swap in another Kazoo). It checks that Kazoo imports.
func KazooArgv() ([]string, error) {
	kazoo.Lock()
	defer kazoo.Unlock()
	if kazoo.argv != nil {
		return append([]string(nil), kazoo.argv...), nil
	}
	if _, err := exec.LookPath(systemPython); err != nil {
		return nil, &MissingError{What: "Debian's python3", Where: systemPython, Package: "python3"}
	}
	check := exec.Command(systemPython, "-I", "-c", "import kazoo.client, kazoo.recipe.lock")
	if out, err := check.CombinedOutput(); err != nil {
		return nil, &MissingError{What: "Kazoo for " + systemPython, Where: "import kazoo", Package: "python3-kazoo",
			Err: fmt.Errorf("%w: %s", err, bytes.TrimSpace(out))}
	}
	script, err := writeScript()
	if err != nil {
		return nil, err
	}
	kazoo.argv = []string{systemPython, "-I", script}
	return append([]string(nil), kazoo.argv...), nil
}

// writeScript puts zkpeer.py into the cache directory under a name that
// carries a hash of its content.
func writeScript() (string, error) {
	sum := sha256.Sum256(pythonSource)
	p := filepath.Join(cacheRoot, "zkpeer-"+hex.EncodeToString(sum[:])[:16]+".py")
	if b, err := os.ReadFile(p); err == nil && bytes.Equal(b, pythonSource) {
		return p, nil
	}
	if err := os.MkdirAll(cacheRoot, 0o755); err != nil {
		return "", fmt.Errorf("peers: %w", err)
	}
	f, err := os.CreateTemp(cacheRoot, "zkpeer-*.tmp")
	if err != nil {
		return "", fmt.Errorf("peers: %w", err)
	}
	_, werr := f.Write(pythonSource)
	cerr := f.Close()
	if err := errors.Join(werr, cerr); err != nil {
		os.Remove(f.Name())
		return "", fmt.Errorf("peers: %w", err)
	}
	if err := os.Rename(f.Name(), p); err != nil {
		os.Remove(f.Name())
		return "", fmt.Errorf("peers: %w", err)
	}
	return p, nil
}

// Argv returns the command line of the named runner, "curator" or "kazoo".
func Argv(ctx context.Context, runner string) ([]string, error) {
	switch runner {
	case "curator":
		return CuratorArgv(ctx)
	case "kazoo":
		return KazooArgv()
	}
	return nil, fmt.Errorf("peers: no runner %q", runner)
}
