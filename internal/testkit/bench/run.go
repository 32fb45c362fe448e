//go:build linux

package bench

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"syscall"
	"time"

	"github.com/zklock/zklock/internal/testkit/peers"
	"github.com/zklock/zklock/internal/testkit/zktest"
)

// logf prints progress on stderr.
func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "zklock-bench: %s %s\n", time.Now().Format("15:04:05"), fmt.Sprintf(format, args...))
}

// inputs are what the command line gives runAll: binaries (absolute paths)
// and where things go.
type inputs struct {
	Zklock      string // the binary measured
	ZklockCgo   string // optional: a cgo build, timed uncontended only
	ZklockBuild string // how Zklock was built, for the report
	// Stamp is the handoff probe (internal/testkit/bench/stamp/stamp.c); without it the
	// probe is `date +%s%N`.
	Stamp  string
	LogDir string
	Repro  string
	// Phases, if set, picks the phases to measure by name.
	Phases *regexp.Regexp
}

// runAll sets up the servers and the tools, measures, and tears everything
// down again. It returns whatever was measured even when a phase failed,
// with the failure in Notes; only a failed set-up is an error.
func runAll(ctx context.Context, cfg Config, in inputs) (*Results, error) {
	res := &Results{Version: resultsVersion, Started: time.Now().UTC(), Repro: in.Repro, Config: cfg}
	loadStart := loadAvg()
	state, err := prepareDirs(in.LogDir)
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(state)
	e, err := newEnv(cfg, in, state, res)
	if err != nil {
		return nil, err
	}

	logf("starting ZooKeeper (logs in %s)", e.logDir)
	zkDir := filepath.Join(state, "zk")
	if err := os.MkdirAll(zkDir, 0o755); err != nil {
		return nil, err
	}
	cluster, err := startZooKeeper(ctx, zkDir, e.logDir)
	if err != nil {
		return nil, fmt.Errorf("ZooKeeper: %w", err)
	}
	defer func() {
		logf("stopping ZooKeeper")
		cluster.Stop()
	}()
	e.zkAddr = cluster.Server(0).Addr()
	logf("ZooKeeper serves on %s", e.zkAddr)

	tools, etcd, stopEtcd, err := startTools(ctx, e, cfg, in, state, res)
	if err != nil {
		return nil, err
	}
	defer stopEtcd()

	conn, err := zktest.Dial(ctx, []string{e.zkAddr})
	if err != nil {
		return nil, fmt.Errorf("driver session: %w", err)
	}
	e.zkConn = conn
	defer func() {
		if e.zkConn != nil {
			e.zkConn.Close()
		}
	}()

	res.Machine = machineInfo(ctx, e, in.Zklock, etcd)
	res.Machine.LoadStart = loadStart
	if in.ZklockBuild != "" {
		res.Machine.Versions["zklock build"] = in.ZklockBuild
	}
	// What the memory tests read must not count the tools' binaries'
	// pages, written moments ago and not yet on disk, as dirty.
	syscall.Sync()
	runPhases(ctx, e, cfg, in, tools, withVariants(e, in, tools, res), cluster.Server(0).Addr(), res)

	res.Machine.LoadEnd = loadAvg()
	res.Finished = time.Now().UTC()
	if ctx.Err() != nil {
		return res, fmt.Errorf("interrupted: %w", ctx.Err())
	}
	return res, nil
}

// prepareDirs empties the log directory and makes the state directory,
// which the caller removes.
func prepareDirs(logDir string) (state string, err error) {
	if err := os.RemoveAll(logDir); err != nil {
		return "", err
	}
	if err := os.MkdirAll(logDir, 0o755); err != nil {
		return "", err
	}
	return stateDir()
}

// newEnv finds the commands the tools run. etcdctl and flock may be
// missing: their tools are then listed as unavailable.
func newEnv(cfg Config, in inputs, state string, res *Results) (*env, error) {
	e := &env{logDir: in.LogDir, timeout: cfg.ProcTimeout, lockDir: filepath.Join(state, "flock")}
	if err := os.MkdirAll(e.lockDir, 0o755); err != nil {
		return nil, err
	}
	for _, b := range []struct {
		dst  *string
		name string
	}{{&e.trueBin, "true"}, {&e.dateBin, "date"}, {&e.shBin, "sh"}, {&e.flock, "flock"}, {&e.etcdctl, "etcdctl"}} {
		p, err := exec.LookPath(b.name)
		if err != nil {
			if b.name == "etcdctl" || b.name == "flock" {
				continue
			}
			return nil, fmt.Errorf("%s not found: %w", b.name, err)
		}
		*b.dst = p
	}
	e.stamp, res.HandoffProbe = []string{e.dateBin, "+%s%N"}, "date +%s%N"
	if in.Stamp != "" {
		e.stamp, res.HandoffProbe = []string{in.Stamp}, "stamp"
	}
	return e, nil
}

// startTools makes the tools to measure, zklock first, starting etcd for
// etcdctl. A peer whose prerequisites are missing is listed with the
// reason instead. stop ends etcd.
func startTools(ctx context.Context, e *env, cfg Config, in inputs, state string, res *Results) (tools []*Tool, etcd *etcdServer, stop func(), err error) {
	stop = func() {}
	add := func(t *Tool) {
		tools = append(tools, t)
		res.Tools = append(res.Tools, toolInfo(t, true, ""))
	}
	unavailable := func(key, name, why string) {
		res.Tools = append(res.Tools, ToolInfo{Key: key, Name: name, Note: why})
	}
	add(newZklock(e, in.Zklock))
	if cfg.wants("minimal") {
		logf("building the minimal Go runner")
		if bin, err := buildMinimal(ctx, state); err != nil {
			unavailable("minimal", "minimal Go runner", err.Error())
			res.Notes = append(res.Notes, "minimal Go runner not measured: "+err.Error())
		} else {
			add(newMinimal(e, bin))
		}
	}
	if cfg.wants("etcd") {
		etcdBin, lerr := exec.LookPath("etcd")
		if lerr != nil || e.etcdctl == "" {
			unavailable("etcd", "etcdctl lock", "etcd or etcdctl not installed (Debian etcd-server, etcd-client; scripts/install-deps.sh installs them)")
		} else {
			logf("starting etcd")
			if etcd, err = startEtcd(ctx, etcdBin, state, e.logDir); err != nil {
				return nil, nil, stop, fmt.Errorf("etcd: %w", err)
			}
			stop = func() {
				logf("stopping etcd")
				etcd.Stop()
			}
			e.etcdAddr = etcd.Endpoint
			logf("etcd serves on %s", e.etcdAddr)
			add(newEtcd(e))
		}
	}
	if cfg.wants("flock") {
		if e.flock == "" {
			unavailable("flock", "flock(1)", "flock not installed (Debian util-linux)")
		} else {
			add(newFlock(e))
		}
	}
	addRunner := func(key, name, class string, argv []string, err error) {
		if err != nil {
			unavailable(key, name, err.Error())
			res.Notes = append(res.Notes, name+" not measured: "+err.Error())
			return
		}
		add(newRunner(e, key, name, class, argv))
	}
	if cfg.wants("kazoo") {
		argv, err := peers.KazooArgv()
		addRunner("kazoo", "Kazoo runner", "python", argv, err)
	}
	if cfg.wants("curator") {
		cctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
		argv, err := peers.CuratorArgv(cctx)
		cancel()
		addRunner("curator", "Curator runner", "jvm", argv, err)
	}
	return tools, etcd, stop, nil
}

// buildMinimal builds the minimal Go runner (cmd/zklock-min) as zklock is
// built for a release: static, no cgo, stripped.
func buildMinimal(ctx context.Context, dir string) (string, error) {
	out := filepath.Join(dir, "zklock-min")
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-ldflags=-s -w", "-o", out, "./internal/testkit/bench/cmd/zklock-min")
	cmd.Dir = repoRoot()
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./internal/testkit/bench/cmd/zklock-min: %v: %s", err, strings.TrimSpace(string(b)))
	}
	return out, nil
}

// withVariants returns the tools of the uncontended test: zklock's
// variants (variants.go) and the cgo build, when given, join them there
// only, since what sets them apart is the cost of one run.
func withVariants(e *env, in inputs, tools []*Tool, res *Results) []*Tool {
	var extra []*Tool
	for _, v := range variants {
		t := newZklockVariant(e, in.Zklock, v)
		res.Tools = append(res.Tools, ToolInfo{Key: t.Key, Name: t.Name, Argv: t.Argv("NAME", "true"), Available: true,
			Note: strings.TrimSpace(v.Note + " (uncontended test only)")})
		extra = append(extra, t)
	}
	if in.ZklockCgo != "" {
		t := newZklock(e, in.ZklockCgo)
		t.Key, t.Name = "zklock-cgo", "zklock (cgo build)"
		t.lockName = func(l string) string { return "/bench/zklock-cgo/" + l }
		res.Tools = append(res.Tools, ToolInfo{Key: t.Key, Name: t.Name, Argv: t.Argv("NAME", "true"), Available: true,
			Note: "plain `go build` (cgo, dynamically linked), uncontended test only"})
		extra = append(extra, t)
	}
	return append(append([]*Tool{tools[0]}, extra...), tools[1:]...)
}

// runPhases measures, one phase after another. A failed phase is noted in
// the results and the next one runs.
func runPhases(ctx context.Context, e *env, cfg Config, in inputs, tools, uncontended []*Tool, zkAddr string, res *Results) {
	phase := func(name string, f func() error) {
		if ctx.Err() != nil || (in.Phases != nil && !in.Phases.MatchString(name)) {
			return
		}
		start := time.Now()
		info := PhaseInfo{Name: name, Load: loadAvg()}
		logf("== %s (load %s)", name, info.Load)
		if err := f(); err != nil {
			info.Error = err.Error()
			res.Notes = append(res.Notes, fmt.Sprintf("%s failed: %v", name, err))
			logf("%s failed: %v", name, err)
		}
		info.Seconds = time.Since(start).Seconds()
		res.Phases = append(res.Phases, info)
		logf("   %s took %s", name, time.Since(start).Round(100*time.Millisecond))
	}
	zl := tools[0]
	minimal := find(tools, func(t **Tool) bool { return (*t).Key == "minimal" })
	var min *Tool
	if minimal != nil {
		min = *minimal
	}
	phase("uncontended latency", func() error { return measureUncontended(ctx, e, cfg, uncontended, res) })
	phase("contended throughput", func() error { return measureContended(ctx, e, cfg, tools, res) })
	phase("handoff latency", func() error { return measureHandoff(ctx, e, cfg, tools, res) })
	phase("memory of a waiting process", func() error { return measureMemory(ctx, e, cfg, tools, res) })
	phase("zklock time breakdown", func() error { return measureProfile(ctx, e, cfg, zl, min, res) })
	phase("zklock list on large trees", func() error { return measureList(ctx, e, cfg, zl, in.Zklock, res) })
	phase("a crowd of idle zklock waiters", func() error { return measureIdle(ctx, e, cfg, zl, res) })
	phase("a storm of --once-per contenders", func() error { return measureStorm(ctx, e, cfg, zl, res) })
	// Last, and without the driver's own session: the per-release server
	// counters must see nothing but the queue.
	e.zkConn.Close()
	e.zkConn = nil
	phase("zklock queue drain and per-release server work", func() error {
		return measureQueue(ctx, e, cfg, zl, zkAddr, res)
	})
	phase("the keepalive of an idle holder", func() error {
		return measureKeepalive(ctx, e, cfg, zl, zkAddr, res)
	})
}

func toolInfo(t *Tool, ok bool, note string) ToolInfo {
	return ToolInfo{Key: t.Key, Name: t.Name, Argv: t.Argv("NAME", "true"), Available: ok, Note: note}
}

// machineInfo records the CPU, memory, kernel and the versions of
// everything measured.
func machineInfo(ctx context.Context, e *env, zklockBin string, etcd *etcdServer) Machine {
	m := Machine{Cores: runtime.NumCPU(), Versions: map[string]string{}}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
				m.CPU = strings.TrimSpace(v)
				break
			}
		}
	}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(l, "MemTotal:") {
				var kb int64
				fmt.Sscanf(strings.TrimSpace(strings.TrimPrefix(l, "MemTotal:")), "%d", &kb)
				m.MemTotal = fmt.Sprintf("%.1f GiB", float64(kb)/(1<<20))
			}
		}
	}
	var u syscall.Utsname
	if syscall.Uname(&u) == nil {
		m.Kernel = utsString(u.Sysname[:]) + " " + utsString(u.Release[:]) + " " + utsString(u.Machine[:])
	}
	if b, err := os.ReadFile("/etc/os-release"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(l, "PRETTY_NAME="); ok {
				m.OS = strings.Trim(v, `"`)
			}
		}
	}
	if b, err := os.ReadFile("/etc/debian_version"); err == nil {
		m.OS += " (" + strings.TrimSpace(string(b)) + ")"
	}
	v := m.Versions
	v["go"] = runtime.Version()
	v["zklock"] = firstLine(cmdOutput(ctx, zklockBin, "version"))
	if rev := firstLine(cmdOutput(ctx, "git", "-C", repoRoot(), "describe", "--always", "--dirty")); rev != "" {
		v["zklock"] += ", commit " + rev
	}
	if mm, err := zktest.Mntr(ctx, e.zkAddr); err == nil {
		v["zookeeper"] = shortVersion(mm["zk_version"])
		if deb := firstLine(cmdOutput(ctx, "dpkg-query", "-W", "-f", "${Version}", "zookeeper")); deb != "" && os.Getenv("ZOOKEEPER_HOME") == "" {
			v["zookeeper"] += " (Debian " + deb + ")"
		}
	}
	v["java"] = firstLine(cmdOutput(ctx, "java", "-version"))
	if etcd != nil {
		v["etcd"] = etcd.Version
	}
	if e.etcdctl != "" {
		v["etcdctl"] = strings.Join(strings.Fields(strings.ReplaceAll(cmdOutput(ctx, e.etcdctl, "version"), "\n", " ")), " ")
	}
	if e.flock != "" {
		v["flock"] = firstLine(cmdOutput(ctx, e.flock, "--version"))
	}
	v["python"] = firstLine(cmdOutput(ctx, "/usr/bin/python3", "--version"))
	v["kazoo"] = firstLine(cmdOutput(ctx, "/usr/bin/python3", "-I", "-c",
		"import importlib.metadata as m; print(m.version('kazoo'))"))
	if k := firstLine(cmdOutput(ctx, "dpkg-query", "-W", "-f", "${Version}", "python3-kazoo")); k != "" {
		v["kazoo"] = strings.TrimSpace(v["kazoo"] + " (Debian python3-kazoo " + k + ")")
	}
	if c := firstLine(cmdOutput(ctx, "dpkg-query", "-W", "-f", "${Version}", "libcurator-recipes-java")); c != "" {
		v["curator"] = "Debian libcurator-recipes-java " + c
	}
	for k, s := range v {
		if s == "" {
			delete(v, k)
		}
	}
	return m
}

func utsString(b []int8) string {
	var s []byte
	for _, c := range b {
		if c == 0 {
			break
		}
		s = append(s, byte(c))
	}
	return string(s)
}

func cmdOutput(ctx context.Context, name string, args ...string) string {
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	b, err := exec.CommandContext(ctx, name, args...).CombinedOutput()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return strings.TrimSpace(l)
}

// repoRoot is the module root: the working directory that scripts/bench.sh
// runs the driver in, or what ZKLOCK_ROOT (set by scripts/lib.sh) says.
func repoRoot() string {
	if r := os.Getenv("ZKLOCK_ROOT"); r != "" {
		return r
	}
	wd, _ := os.Getwd()
	return wd
}

// loadAvg is the first three fields of /proc/loadavg.
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(b))
	if len(f) > 3 {
		f = f[:3]
	}
	return strings.Join(f, " ")
}
