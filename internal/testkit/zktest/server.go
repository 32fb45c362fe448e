package zktest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/zklock/zklock/internal/testkit/javart"
)

// logTailLines is how much of a server's log a start-up error quotes.
const logTailLines = 20

// stopGrace is how long Stop waits after SIGTERM before it sends SIGKILL.
const stopGrace = 10 * time.Second

// Server is one ZooKeeper server process. Its client port, data directory
// and configuration stay the same across Kill and Restart, so a restarted
// server recovers its data and sessions like a real one would.
type Server struct {
	id         int // 1-based; the myid of ensemble members
	clientPort int
	dir        string // holds zoo.cfg and data/
	dataDir    string
	cfgPath    string
	logPath    string
	inst       *Install
	opts       Options
	peers      []string // the member lines of its zoo.cfg; none for standalone

	mu   sync.Mutex
	proc *process
}

// process is one run of the JVM.
type process struct {
	cmd       *exec.Cmd
	done      chan struct{} // closed once the process has been reaped
	err       error         // exit status; valid after done is closed
	logOffset int64         // where this run's output starts in the log
}

func (p *process) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// ID is the server's number: its myid in an ensemble (1..n), 1 for a
// standalone server.
func (s *Server) ID() int { return s.id }

// Addr is the client address, "127.0.0.1:port".
func (s *Server) Addr() string { return "127.0.0.1:" + strconv.Itoa(s.clientPort) }

// Port is the client port.
func (s *Server) Port() int { return s.clientPort }

// LogPath is the file that receives the server's log output.
func (s *Server) LogPath() string { return s.logPath }

// Running reports whether the server's process is alive. A running server
// is not necessarily serving; see Mode.
func (s *Server) Running() bool {
	s.mu.Lock()
	p := s.proc
	s.mu.Unlock()
	return p != nil && !p.exited()
}

// Pid is the JVM's process id, or 0 if it is not running.
func (s *Server) Pid() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.proc == nil || s.proc.exited() {
		return 0
	}
	return s.proc.cmd.Process.Pid
}

// Mode asks the server (via srvr) whether it is serving and in which role:
// "standalone", "leader", "follower" or "observer". It returns
// errNotServing while the server is up but has no quorum.
func (s *Server) Mode(ctx context.Context) (string, error) {
	m, err := srvr(ctx, s.Addr())
	if err != nil {
		return "", err
	}
	return m["Mode"], nil
}

// Kill sends SIGKILL and waits until the process has been reaped. Like a
// crash, it gives the server no chance to close sessions or connections
// cleanly. Killing a server that is not running is a no-op.
func (s *Server) Kill() error {
	s.mu.Lock()
	p := s.proc
	s.mu.Unlock()
	if p == nil {
		return nil
	}
	if err := p.cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("zktest: kill server %d: %w", s.id, err)
	}
	<-p.done
	return nil
}

// Stop sends SIGTERM, waits for the process to exit (SIGKILL after 10s)
// and reaps it. Stopping a server that is not running is a no-op.
func (s *Server) Stop() error {
	s.mu.Lock()
	p := s.proc
	s.mu.Unlock()
	if p == nil {
		return nil
	}
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("zktest: stop server %d: %w", s.id, err)
	}
	t := time.NewTimer(stopGrace)
	defer t.Stop()
	select {
	case <-p.done:
		return nil
	case <-t.C:
		return s.Kill()
	}
}

// Restart stops the server if it is running, starts it again with the same
// ports, configuration and data, and waits until it serves clients. An
// ensemble member serves only once it has joined a quorum, so restarting
// one while a majority is down waits until ctx (or Options.StartTimeout)
// runs out; in that case the process is left running, so it can still join
// once a quorum is back.
func (s *Server) Restart(ctx context.Context) error {
	if err := s.Stop(); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, s.opts.StartTimeout)
	defer cancel()
	var err error
	// The ports must stay the same, so a bind clash (another process took
	// a port while the server was down) cannot be solved by picking new
	// ones; retry a few times in case the clash is transient.
	for attempt := 0; attempt < 5; attempt++ {
		if err = s.launch(); err != nil {
			return err
		}
		err = waitServing(ctx, []*Server{s}, false)
		if err == nil || !errors.Is(err, errBindClash) || ctx.Err() != nil {
			return err
		}
		s.Kill()
		if sleepCtx(ctx, time.Duration(attempt+1)*200*time.Millisecond) != nil {
			break
		}
	}
	return err
}

// SetEnv replaces the variables Options.ServerEnv adds to this server's
// JVM environment, from its next start (Restart) on: a server restarted
// with another clock (Faketime), as one whose clock was set.
func (s *Server) SetEnv(env []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := maps.Clone(s.opts.ServerEnv)
	if m == nil {
		m = map[int][]string{}
	}
	m[s.id] = env
	s.opts.ServerEnv = m
}

// launch starts the JVM; it does not wait for the server to serve.
func (s *Server) launch() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.proc != nil && !s.proc.exited() {
		return fmt.Errorf("zktest: server %d is already running", s.id)
	}
	// The fast lane starts no JVM. (A made-up Install, such as a test's
	// fake java, is no JVM.)
	if java, err := javart.Java(); err == nil && java == s.inst.Java {
		javart.CheckNotShort("a ZooKeeper server")
	}
	f, err := os.OpenFile(s.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("zktest: server %d: %w", s.id, err)
	}
	// The child gets its own copy of the descriptor, so ours can be closed
	// as soon as it has started.
	defer f.Close()
	fmt.Fprintf(f, "==== zktest: starting server %d at %s ====\n", s.id, time.Now().Format(time.RFC3339Nano))
	off, _ := f.Seek(0, io.SeekEnd)

	args := append(s.opts.jvmFlags(),
		"-cp", strings.Join(s.inst.Classpath, string(os.PathListSeparator)),
		mainClass, s.cfgPath)
	cmd := exec.Command(s.inst.Java, args...)
	cmd.Dir = s.dir
	if env := s.opts.ServerEnv[s.id]; len(env) > 0 {
		cmd.Env = append(os.Environ(), env...)
	}
	// slf4j-simple logs to stderr; one file per server keeps the output of
	// concurrently running servers apart and lets errors quote it.
	cmd.Stdout = f
	cmd.Stderr = f
	if err := startCmd(cmd); err != nil {
		return fmt.Errorf("zktest: server %d: starting %s: %w", s.id, s.inst.Java, err)
	}
	p := &process{cmd: cmd, done: make(chan struct{}), logOffset: off}
	// Reap the process as soon as it exits, whoever kills it, so that no
	// zombie is left behind and Running reflects reality.
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	s.proc = p
	return nil
}

func (s *Server) current() *process {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.proc
}

// errBindClash marks a start that failed because a port was taken; the
// caller may retry with other ports.
var errBindClash = errors.New("port already in use")

// startupError describes a server that failed to come up, quoting its log.
func (s *Server) startupError(what string, cause error) error {
	var off int64
	if p := s.current(); p != nil {
		off = p.logOffset
	}
	tail := tailFile(s.logPath, off, logTailLines)
	err := fmt.Errorf("zktest: server %d (%s, config %s, jars from %s) %s: %w\n--- last %d lines of %s ---\n%s",
		s.id, s.Addr(), s.cfgPath, s.inst.Source, what, cause, logTailLines, s.logPath, tail)
	if strings.Contains(tail, "Address already in use") || s.bindClashInLog() {
		err = fmt.Errorf("%w (%w)", err, errBindClash)
	}
	return err
}

// bindClashInLog reports whether this run of the server failed to bind a
// port. Ensemble members do not always exit on such a failure (a leader
// that cannot bind its quorum port just falls back to an election), so the
// log is the reliable signal.
func (s *Server) bindClashInLog() bool {
	p := s.current()
	if p == nil {
		return false
	}
	f, err := os.Open(s.logPath)
	if err != nil {
		return false
	}
	defer f.Close()
	if _, err := f.Seek(p.logOffset, io.SeekStart); err != nil {
		return false
	}
	b, err := io.ReadAll(io.LimitReader(f, 8<<20))
	if err != nil {
		return false
	}
	return strings.Contains(string(b), "Address already in use")
}

// tailFile returns the last n lines of path from offset on.
func tailFile(path string, offset int64, n int) string {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Sprintf("(cannot read log: %v)", err)
	}
	defer f.Close()
	const maxRead = 64 << 10
	fi, err := f.Stat()
	if err != nil {
		return fmt.Sprintf("(cannot read log: %v)", err)
	}
	start := offset
	if fi.Size()-start > maxRead {
		start = fi.Size() - maxRead
	}
	if _, err := f.Seek(start, io.SeekStart); err != nil {
		return fmt.Sprintf("(cannot read log: %v)", err)
	}
	b, _ := io.ReadAll(f)
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// writeFiles writes the server's zoo.cfg (and myid for ensemble members)
// and creates its data directory.
func (s *Server) writeFiles(peers []string) error {
	s.peers = peers
	if err := os.MkdirAll(s.dataDir, 0o755); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(s.logPath), 0o755); err != nil {
		return err
	}
	if len(peers) > 0 {
		if err := os.WriteFile(filepath.Join(s.dataDir, "myid"), []byte(strconv.Itoa(s.id)+"\n"), 0o644); err != nil {
			return err
		}
	}
	return os.WriteFile(s.cfgPath, []byte(s.opts.config(s.dataDir, s.clientPort, peers)), 0o644)
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// SetConfig sets (or, with an empty value, removes) a zoo.cfg entry of
// this server alone, as an operator edits one file of a rolling restart:
// for example "maxSessionTimeout" to "4000". It takes effect at the next
// Restart; the running process keeps what it read at its start.
func (s *Server) SetConfig(key, value string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	extra := make(map[string]string, len(s.opts.ExtraConfig)+1)
	for k, v := range s.opts.ExtraConfig {
		extra[k] = v
	}
	if value == "" {
		delete(extra, key)
	} else {
		extra[key] = value
	}
	s.opts.ExtraConfig = extra
	return os.WriteFile(s.cfgPath, []byte(s.opts.config(s.dataDir, s.clientPort, s.peers)), 0o644)
}

// SaveData copies the server's data directory (its snapshots, transaction
// logs and myid) to dir, for RestoreData to bring back later: a backup.
// Copy it from a stopped server, or accept what a live copy gets (files
// being written are copied as far as they are written).
func (s *Server) SaveData(dir string) error {
	return copyTree(s.dataDir, dir)
}

// RestoreData replaces the server's data directory by a copy SaveData
// made, as an operator restores a backup; with dir "" it leaves the
// directory empty but for myid, as a wiped disk would (an ensemble member
// cannot start without its myid). The server must be stopped; Restart
// starts it on the restored state.
func (s *Server) RestoreData(dir string) error {
	if s.Running() {
		return fmt.Errorf("zktest: server %d is running; stop it before restoring its data", s.id)
	}
	if err := os.RemoveAll(s.dataDir); err != nil {
		return fmt.Errorf("zktest: %w", err)
	}
	if dir != "" {
		return copyTree(dir, s.dataDir)
	}
	return s.writeFiles(s.peers)
}

// copyTree copies the regular files and directories below src to dst.
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, 0o644)
	})
}
