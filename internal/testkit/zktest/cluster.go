package zktest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Cluster is a set of running ZooKeeper servers: one for StartStandalone,
// n for StartEnsemble.
type Cluster struct {
	servers    []*Server
	baseDir    string
	removeBase bool

	mu       sync.Mutex
	stopped  bool
	links    []*peerLink  // Options.PeerProxies only; see peers.go
	isolated map[int]bool // servers cut off by Isolate
}

// startAttempts is how many times a start is tried with fresh ports when a
// port turns out to be taken.
const startAttempts = 3

// pollInterval is how often readiness is polled. Start-up takes hundreds
// of milliseconds, so polling this often costs little and adds little.
const pollInterval = 25 * time.Millisecond

// probeTimeout bounds each readiness probe; see defaultFourLetterTimeout
// for why a probe can hang during start-up.
const probeTimeout = time.Second

var clusterSeq atomic.Int64

// pickPorts is freePorts; tests replace it to provoke a bind clash.
var pickPorts = freePorts

// StartStandalone starts a single ZooKeeper server in standalone mode and
// waits until it serves clients.
func StartStandalone(ctx context.Context, opts Options) (*Cluster, error) {
	return start(ctx, 1, false, opts)
}

// StartEnsemble starts an n-server quorum (n = 3 is typical) on loopback
// and waits until every server serves clients and exactly one is leader.
// Server IDs (myid) are 1..n; Cluster.Server(i) is the server with ID i+1.
func StartEnsemble(ctx context.Context, n int, opts Options) (*Cluster, error) {
	if n < 2 {
		return nil, fmt.Errorf("zktest: an ensemble needs at least 2 servers, got %d (use StartStandalone for one)", n)
	}
	return start(ctx, n, true, opts)
}

func start(ctx context.Context, n int, ensemble bool, opts Options) (*Cluster, error) {
	opts = opts.withDefaults()
	if err := opts.validate(); err != nil {
		return nil, err
	}
	inst := opts.Install
	if inst == nil {
		var err error
		if inst, err = Locate(); err != nil {
			return nil, err
		}
	} else if inst.Source == "" {
		cp := *inst
		cp.Source = "Options.Install"
		inst = &cp
	}
	ctx, cancel := context.WithTimeout(ctx, opts.StartTimeout)
	defer cancel()

	c := &Cluster{}
	var err error
	if opts.BaseDir == "" {
		c.baseDir, err = os.MkdirTemp("", "zktest-")
		c.removeBase = true
	} else {
		if err = os.MkdirAll(opts.BaseDir, 0o755); err == nil {
			c.baseDir, err = os.MkdirTemp(opts.BaseDir, "zktest-")
		}
	}
	if err != nil {
		return nil, fmt.Errorf("zktest: creating base directory: %w", err)
	}
	logPrefix := fmt.Sprintf("zktest-%d-%d", os.Getpid(), clusterSeq.Add(1))

	for attempt := 1; ; attempt++ {
		err = c.tryStart(ctx, n, ensemble, opts, inst, logPrefix)
		if err == nil {
			return c, nil
		}
		c.killAll()
		if !errors.Is(err, errBindClash) || attempt == startAttempts || ctx.Err() != nil {
			break
		}
	}
	c.Stop()
	return nil, err
}

// tryStart lays out fresh directories on fresh ports and starts the
// servers. Data directories are recreated so that a retry after a bind
// clash does not inherit a half-initialised state.
func (c *Cluster) tryStart(ctx context.Context, n int, ensemble bool, opts Options, inst *Install, logPrefix string) error {
	perServer := 1
	if ensemble {
		perServer = 3 // client, quorum (peer) and election ports
	}
	ports, err := pickPorts(n * perServer)
	if err != nil {
		return err
	}
	// members[i] is the member list in server i's zoo.cfg.
	members := make([][]string, n)
	if ensemble {
		var quorum, election []int
		for i := 0; i < n; i++ {
			quorum = append(quorum, ports[n+2*i])
			election = append(election, ports[n+2*i+1])
		}
		c.mu.Lock()
		c.closeLinks()
		c.mu.Unlock()
		if opts.PeerProxies {
			links, m, err := openPeerLinks(n, quorum, election)
			if err != nil {
				return err
			}
			c.mu.Lock()
			c.links, c.isolated = links, map[int]bool{}
			c.mu.Unlock()
			members = m
		} else {
			for i := 0; i < n; i++ {
				members[0] = append(members[0], memberLine(opts, quorum[i], election[i], ports[i]))
			}
			for i := 1; i < n; i++ {
				members[i] = members[0]
			}
		}
	}
	c.servers = nil
	for i := 0; i < n; i++ {
		id := i + 1
		dir := filepath.Join(c.baseDir, fmt.Sprintf("server-%d", id))
		if err := os.RemoveAll(dir); err != nil {
			return fmt.Errorf("zktest: %w", err)
		}
		logPath := filepath.Join(dir, "zookeeper.log")
		if opts.LogDir != "" {
			logPath = filepath.Join(opts.LogDir, fmt.Sprintf("%s-server-%d.log", logPrefix, id))
		}
		s := &Server{
			id:         id,
			clientPort: ports[i],
			dir:        dir,
			dataDir:    filepath.Join(dir, "data"),
			cfgPath:    filepath.Join(dir, "zoo.cfg"),
			logPath:    logPath,
			inst:       inst,
			opts:       opts,
		}
		if err := s.writeFiles(members[i]); err != nil {
			return fmt.Errorf("zktest: preparing server %d: %w", id, err)
		}
		c.servers = append(c.servers, s)
	}
	// All JVMs start at once: a quorum needs a majority up before anything
	// serves, and the JVMs' start-up overlaps well even on two cores.
	for _, s := range c.servers {
		if err := s.launch(); err != nil {
			return err
		}
	}
	return waitServing(ctx, c.servers, ensemble)
}

// waitServing polls srvr until every server in ss is serving and, if
// needLeader, exactly one of them reports Mode: leader. srvr is used rather
// than ruok because a quorum member answers ruok with imok even before it
// has joined a quorum. It fails fast, quoting the log, if a process exits.
func waitServing(ctx context.Context, ss []*Server, needLeader bool) error {
	modes := make([]string, len(ss))
	for round := 0; ; round++ {
		leaders := 0
		serving := 0
		for i, s := range ss {
			p := s.current()
			if p == nil {
				return fmt.Errorf("zktest: server %d was never started", s.id)
			}
			if p.exited() {
				return s.startupError("exited during start-up", exitCause(p))
			}
			mode := probeMode(ctx, s, p)
			modes[i] = mode
			if mode != "" {
				serving++
			}
			if mode == "leader" {
				leaders++
			}
		}
		if serving == len(ss) && (!needLeader || leaders == 1) {
			return nil
		}
		// Every ~half second, look for bind failures that leave the JVM
		// running (so the exit check above would not see them).
		if round%20 == 19 {
			for _, s := range ss {
				if s.bindClashInLog() {
					return s.startupError("could not bind a port", errBindClash)
				}
			}
		}
		if err := sleepCtx(ctx, pollInterval); err != nil {
			var notReady []string
			for i, s := range ss {
				m := modes[i]
				if m == "" {
					m = "not serving"
				}
				notReady = append(notReady, fmt.Sprintf("server %d: %s", s.id, m))
			}
			// Quote the log of the first server that is not serving (or,
			// when all serve but no leader emerged, of the first server).
			culprit := ss[0]
			for i, s := range ss {
				if modes[i] == "" {
					culprit = s
					break
				}
			}
			return culprit.startupError(
				fmt.Sprintf("not ready (%s)", strings.Join(notReady, ", ")), err)
		}
	}
}

// probeMode asks s for its mode ("" if not serving). The probe is bounded
// by probeTimeout and abandoned as soon as the process exits: if the port
// was taken by someone else, the probe may be talking to a stranger that
// never answers, and the exit is the news that matters.
func probeMode(ctx context.Context, s *Server, p *process) string {
	pctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	go func() {
		select {
		case <-p.done:
			cancel()
		case <-pctx.Done():
		}
	}()
	mode, err := s.Mode(pctx)
	if err != nil {
		return ""
	}
	return mode
}

func exitCause(p *process) error {
	if p.err != nil {
		return p.err
	}
	return errors.New("exit status 0")
}

// ConnectString is the comma-separated list of client addresses, the form
// ZooKeeper's own tools accept: "127.0.0.1:p1,127.0.0.1:p2,...". Note that
// go-zookeeper's zk.Connect takes a slice instead (use Addrs, or split
// this string on commas).
func (c *Cluster) ConnectString() string { return strings.Join(c.Addrs(), ",") }

// Addrs lists the client addresses of all servers, in ID order.
func (c *Cluster) Addrs() []string {
	a := make([]string, len(c.servers))
	for i, s := range c.servers {
		a[i] = s.Addr()
	}
	return a
}

// Len is the number of servers.
func (c *Cluster) Len() int { return len(c.servers) }

// Server returns the i-th server (0-based; its ID is i+1).
func (c *Cluster) Server(i int) *Server { return c.servers[i] }

// Servers returns all servers in ID order.
func (c *Cluster) Servers() []*Server { return append([]*Server(nil), c.servers...) }

// Dir is the directory holding the servers' configuration and data.
func (c *Cluster) Dir() string { return c.baseDir }

// Leader waits until exactly one running server reports itself leader (or
// standalone) and returns it. Use it after killing a leader to find the
// new one.
func (c *Cluster) Leader(ctx context.Context) (*Server, error) {
	for {
		var found []*Server
		for _, s := range c.servers {
			if !s.Running() {
				continue
			}
			pctx, cancel := context.WithTimeout(ctx, probeTimeout)
			mode, err := s.Mode(pctx)
			cancel()
			if err == nil && (mode == "leader" || mode == "standalone") {
				found = append(found, s)
			}
		}
		if len(found) == 1 {
			return found[0], nil
		}
		if err := sleepCtx(ctx, pollInterval); err != nil {
			return nil, fmt.Errorf("zktest: no single leader: %w", err)
		}
	}
}

// WaitServing waits until every running server serves clients and, for an
// ensemble, one of them is leader.
func (c *Cluster) WaitServing(ctx context.Context) error {
	var running []*Server
	for _, s := range c.servers {
		if s.Running() {
			running = append(running, s)
		}
	}
	if len(running) == 0 {
		return errors.New("zktest: no server is running")
	}
	return waitServing(ctx, running, len(c.servers) > 1)
}

// Stop kills every server, waits for the processes to be reaped and
// removes the temporary directory (if the cluster created one). Servers are
// killed rather than shut down gracefully because nothing needs their data
// afterwards. Stop is idempotent.
func (c *Cluster) Stop() error {
	c.mu.Lock()
	if c.stopped {
		c.mu.Unlock()
		return nil
	}
	c.stopped = true
	c.mu.Unlock()
	err := c.killAll()
	c.mu.Lock()
	c.closeLinks()
	c.mu.Unlock()
	if c.removeBase {
		if rerr := os.RemoveAll(c.baseDir); rerr != nil {
			err = errors.Join(err, fmt.Errorf("zktest: %w", rerr))
		}
	}
	return err
}

func (c *Cluster) killAll() error {
	errs := make([]error, len(c.servers))
	var wg sync.WaitGroup
	for i, s := range c.servers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = s.Kill()
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}
