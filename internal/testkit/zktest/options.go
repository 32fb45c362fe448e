package zktest

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/zklock/zklock/internal/testkit/javart"
)

// Options configures the servers started by StartStandalone and
// StartEnsemble. The zero value is ready to use.
type Options struct {
	// TickTime is ZooKeeper's basic time unit. Default 200ms (production
	// uses 2s): session timeouts are bounded below by 2 ticks and session
	// expiry is checked once per tick, so a short tick lets tests use
	// sub-second session timeouts and see expiry promptly.
	TickTime time.Duration
	// MinSessionTimeout and MaxSessionTimeout bound the session timeout a
	// client can negotiate. Defaults 400ms (2 ticks) and 60s. The server
	// silently clamps requests into this range, so tests that rely on a
	// particular timeout must stay inside it.
	MinSessionTimeout time.Duration
	MaxSessionTimeout time.Duration
	// InitLimit and SyncLimit are in ticks (ensembles only). Defaults 20 and
	// 10 (4s and 2s with the default tick): small, so a partitioned
	// follower is noticed quickly, yet loose enough for three JVMs sharing
	// two cores with a busy test run.
	InitLimit int
	SyncLimit int
	// PeerProxies (ensembles only) routes every server-to-server link
	// through a Proxy of its own, one per direction and port, so that
	// Cluster.Isolate can partition a server from the other members while
	// its clients still reach it. See peers.go for how the configuration
	// is written.
	PeerProxies bool
	// ContainerCheckInterval is how often the server looks for empty
	// container znodes to delete. Default 100ms (production: 60s), so a
	// test can wait briefly and then assert that nothing was left behind.
	// Note that a container which never had a child is not reaped at all
	// unless -Dznode.container.maxNeverUsedIntervalMs is set (ExtraJVMFlags).
	ContainerCheckInterval time.Duration
	// MaxClientCnxns caps the connections one client address may hold open
	// to one server; the server closes any beyond it right after accepting
	// it. 0 means no cap, this package's default, because a test opens
	// many connections from 127.0.0.1; ZooKeeper's own default is 60.
	MaxClientCnxns int
	// ExtraConfig adds zoo.cfg entries, or overrides the defaults written by
	// this package (e.g. "maxClientCnxns": "10").
	ExtraConfig map[string]string
	// ExtraJVMFlags are appended to the JVM flags (before the main class).
	ExtraJVMFlags []string
	// BaseDir holds per-server directories (config and data). If empty, a
	// fresh temporary directory is created and removed by Cluster.Stop; a
	// directory given here is left in place.
	BaseDir string
	// LogDir receives one log file per server, named zookeeper-<id>.log. If
	// empty, logs go into each server's directory under BaseDir (and so are
	// removed with a temporary BaseDir). Set it to keep logs, e.g. as CI
	// artifacts.
	LogDir string
	// StartTimeout bounds each start (and Restart) on top of the caller's
	// context. Default 3 minutes: a normal standalone start takes well
	// under a second, but on a 2-core machine with a load of 40 one took
	// more than 60 s; a bound that passing tests never reach costs nothing.
	StartTimeout time.Duration
	// Install overrides Locate, e.g. to pin a particular JVM.
	Install *Install
	// ServerEnv adds variables to the environment of one server's JVM,
	// by server ID (1-based): Faketime's, to set one member's clock off.
	ServerEnv map[int][]string
	// Reconfig (ensembles only) enables dynamic reconfiguration: the
	// members' lines carry their client addresses, the servers publish
	// them in /zookeeper/config, and Cluster.Join and Cluster.Leave change
	// the membership with the reconfig operation. ACLs are not checked
	// (zookeeper.skipACL), since reconfig otherwise needs the super user.
	Reconfig bool
}

func (o Options) withDefaults() Options {
	if o.TickTime <= 0 {
		o.TickTime = 200 * time.Millisecond
	}
	if o.MinSessionTimeout <= 0 {
		o.MinSessionTimeout = 2 * o.TickTime
	}
	if o.MaxSessionTimeout <= 0 {
		o.MaxSessionTimeout = 60 * time.Second
	}
	if o.InitLimit <= 0 {
		o.InitLimit = 20
	}
	if o.SyncLimit <= 0 {
		o.SyncLimit = 10
	}
	if o.ContainerCheckInterval <= 0 {
		o.ContainerCheckInterval = 100 * time.Millisecond
	}
	if o.StartTimeout <= 0 {
		o.StartTimeout = 3 * time.Minute
	}
	return o
}

func (o Options) validate() error {
	if o.MinSessionTimeout > o.MaxSessionTimeout {
		return fmt.Errorf("zktest: MinSessionTimeout %v exceeds MaxSessionTimeout %v", o.MinSessionTimeout, o.MaxSessionTimeout)
	}
	if o.MaxClientCnxns < 0 {
		return fmt.Errorf("zktest: MaxClientCnxns %d is negative", o.MaxClientCnxns)
	}
	if o.Reconfig && o.PeerProxies {
		return errors.New("zktest: Reconfig and PeerProxies cannot be combined: the proxies need each server's own member list")
	}
	if o.Install != nil && (o.Install.Java == "" || len(o.Install.Classpath) == 0) {
		return errNoInstall
	}
	return nil
}

func ms(d time.Duration) string { return strconv.FormatInt(d.Milliseconds(), 10) }

// jvmFlags are chosen for start-up speed and a small footprint: a test
// server holds a handful of znodes, so a small serial-GC heap and the C1
// compiler alone are plenty, and they start noticeably faster than the
// defaults on a 2-core machine.
func (o Options) jvmFlags() []string {
	f := append(javart.StartupFlags(),
		"-Xmx256m",
		"-Xshare:auto",
		"-Djava.net.preferIPv4Stack=true",
		"-Dzookeeper.admin.enableServer=false",
		// Tests do not need durability across a machine crash; skipping
		// fsync makes writes (and so every lock operation) much faster.
		"-Dzookeeper.forceSync=no",
		"-Dznode.container.checkIntervalMs="+ms(o.ContainerCheckInterval),
		// Leader election backs off up to 60s between rounds by default,
		// which can stall an ensemble whose members start a few hundred
		// milliseconds apart. Cap the back-off so elections settle quickly.
		"-Dzookeeper.fastleader.minNotificationInterval=100",
		"-Dzookeeper.fastleader.maxNotificationInterval=800",
		"-Dzookeeper.cnxTimeout=1000",
	)
	if o.Reconfig {
		f = append(f, "-Dzookeeper.skipACL=yes")
	}
	return append(f, o.ExtraJVMFlags...)
}

// kv is one zoo.cfg line; a slice keeps the file in a readable, stable order.
type kv struct{ k, v string }

// config renders zoo.cfg for one server. peers is empty for standalone.
// An entry of peers is the value of server.N, N its 1-based index, or
// (under Reconfig, where ids need not follow each other) a whole
// "server.N=value" line.
func (o Options) config(dataDir string, clientPort int, peers []string) string {
	lines := []kv{
		{"tickTime", ms(o.TickTime)},
		{"dataDir", dataDir},
	}
	if o.Reconfig {
		// The client address is part of each member's line, and a
		// server that may be left alone must not fall back to
		// standalone mode, which ignores its membership.
		lines = append(lines, kv{"reconfigEnabled", "true"}, kv{"standaloneEnabled", "false"})
	} else {
		lines = append(lines, kv{"clientPort", strconv.Itoa(clientPort)}, kv{"clientPortAddress", "127.0.0.1"})
	}
	lines = append(lines, []kv{
		{"minSessionTimeout", ms(o.MinSessionTimeout)},
		{"maxSessionTimeout", ms(o.MaxSessionTimeout)},
		{"4lw.commands.whitelist", "*"},
		{"admin.enableServer", "false"},
		// Test clients open many connections from one address.
		{"maxClientCnxns", strconv.Itoa(o.MaxClientCnxns)},
		{"initLimit", strconv.Itoa(o.InitLimit)},
		{"syncLimit", strconv.Itoa(o.SyncLimit)},
	}...)
	for i, p := range peers {
		if k, v, ok := strings.Cut(p, "="); ok && strings.HasPrefix(k, "server.") {
			lines = append(lines, kv{k, v})
			continue
		}
		lines = append(lines, kv{fmt.Sprintf("server.%d", i+1), p})
	}
	extra := make([]string, 0, len(o.ExtraConfig))
	for k := range o.ExtraConfig {
		extra = append(extra, k)
	}
	sort.Strings(extra)
	for _, k := range extra {
		replaced := false
		for i := range lines {
			if lines[i].k == k {
				lines[i].v = o.ExtraConfig[k]
				replaced = true
			}
		}
		if !replaced {
			lines = append(lines, kv{k, o.ExtraConfig[k]})
		}
	}
	var b []byte
	b = append(b, "# written by zktest\n"...)
	for _, l := range lines {
		b = append(b, l.k...)
		b = append(b, '=')
		b = append(b, l.v...)
		b = append(b, '\n')
	}
	return string(b)
}
