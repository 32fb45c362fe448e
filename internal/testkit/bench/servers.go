//go:build linux

package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/zklock/zklock/internal/testkit/zktest"
)

// stateDir is where both servers keep their data. On tmpfs (/dev/shm) an
// fsync costs next to nothing, so ZooKeeper (which fsyncs its transaction
// log) and etcd (which fsyncs its WAL) are on the same footing and neither
// measures the disk. Production servers would pay for real fsyncs; see the
// report's caveats.
func stateDir() (string, error) {
	base := "/dev/shm"
	if fi, err := os.Stat(base); err != nil || !fi.IsDir() {
		base = os.TempDir()
	}
	return os.MkdirTemp(base, "zklock-bench-")
}

// startZooKeeper starts a standalone server configured like a production
// one where it matters for speed: the default 2 s tick, the default (C2)
// JIT instead of zktest's C1-only start-up setting, a bigger heap, fsync on
// (onto tmpfs, see stateDir), and container nodes reaped every 60 s as by
// default, so a lock path is not re-created between back-to-back runs.
func startZooKeeper(ctx context.Context, dir, logDir string) (*zktest.Cluster, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	return zktest.StartStandalone(ctx, zktest.Options{
		TickTime:               2 * time.Second,
		ContainerCheckInterval: 60 * time.Second,
		BaseDir:                dir,
		LogDir:                 logDir,
		ExtraJVMFlags: []string{
			// Later flags win: undo zktest's start-up tuning.
			"-XX:TieredStopAtLevel=4",
			"-Xmx1g",
			"-Dzookeeper.forceSync=yes",
		},
	})
}

// etcdServer is one local etcd member.
type etcdServer struct {
	cmd      *exec.Cmd
	done     chan struct{}
	Endpoint string // host:port for etcdctl --endpoints
	Version  string
	logPath  string
}

// freePort asks the kernel for a free loopback port.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// startEtcd starts a single-member etcd on loopback and waits for /health.
// It is called from the main goroutine, which is locked to the main thread,
// so the parent-death signal takes etcd down with the driver.
func startEtcd(ctx context.Context, bin, dir, logDir string) (*etcdServer, error) {
	var lastErr error
	for attempt := 0; attempt < 3; attempt++ {
		s, err := tryStartEtcd(ctx, bin, dir, logDir, attempt)
		if err == nil {
			return s, nil
		}
		lastErr = err
		if ctx.Err() != nil {
			break
		}
	}
	return nil, lastErr
}

func tryStartEtcd(ctx context.Context, bin, dir, logDir string, attempt int) (*etcdServer, error) {
	cport, err := freePort()
	if err != nil {
		return nil, err
	}
	pport, err := freePort()
	if err != nil {
		return nil, err
	}
	data := filepath.Join(dir, fmt.Sprintf("etcd-%d", attempt))
	client := "http://127.0.0.1:" + strconv.Itoa(cport)
	peer := "http://127.0.0.1:" + strconv.Itoa(pport)
	logPath := filepath.Join(logDir, "etcd.log")
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	defer logf.Close()
	cmd := exec.Command(bin,
		"--name", "bench",
		"--data-dir", data,
		"--listen-client-urls", client,
		"--advertise-client-urls", client,
		"--listen-peer-urls", peer,
		"--initial-advertise-peer-urls", peer,
		"--initial-cluster", "bench="+peer,
		"--initial-cluster-state", "new",
		"--logger", "zap",
		"--log-level", "warn",
		"--log-outputs", "stderr",
	)
	cmd.Stdout = logf
	cmd.Stderr = logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("etcd: %w", err)
	}
	s := &etcdServer{cmd: cmd, done: make(chan struct{}), Endpoint: "127.0.0.1:" + strconv.Itoa(cport), logPath: logPath}
	go func() { cmd.Wait(); close(s.done) }()

	deadline := time.Now().Add(30 * time.Second)
	hc := &http.Client{Timeout: time.Second}
	for {
		select {
		case <-s.done:
			return nil, fmt.Errorf("etcd exited during start-up; see %s", logPath)
		case <-ctx.Done():
			s.Stop()
			return nil, ctx.Err()
		default:
		}
		if resp, err := hc.Get(client + "/health"); err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if strings.Contains(string(b), `"health":"true"`) {
				break
			}
		}
		if time.Now().After(deadline) {
			s.Stop()
			return nil, fmt.Errorf("etcd did not become healthy within 30s; see %s", logPath)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if resp, err := hc.Get(client + "/version"); err == nil {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var v struct {
			Server  string `json:"etcdserver"`
			Cluster string `json:"etcdcluster"`
		}
		if json.Unmarshal(b, &v) == nil && v.Server != "" {
			s.Version = v.Server + " (cluster version " + v.Cluster + ")"
		} else {
			s.Version = strings.TrimSpace(string(b))
		}
	}
	return s, nil
}

// Stop sends SIGTERM and waits (SIGKILL after 10 s).
func (s *etcdServer) Stop() {
	if s == nil {
		return
	}
	s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(10 * time.Second):
		s.cmd.Process.Kill()
		<-s.done
	}
}

// mntr reads the server's counters as integers; non-numeric values (the
// version, the server state) are left out.
func mntr(ctx context.Context, addr string) (map[string]int64, error) {
	m, err := zktest.Mntr(ctx, addr)
	if err != nil {
		return nil, err
	}
	out := make(map[string]int64, len(m))
	for k, v := range m {
		if n, err := strconv.ParseInt(v, 10, 64); err == nil {
			out[k] = n
		}
	}
	return out, nil
}

// waitMntr polls mntr until cond holds, or fails after within.
func waitMntr(ctx context.Context, addr string, within time.Duration, what string, cond func(map[string]int64) bool) (map[string]int64, error) {
	deadline := time.Now().Add(within)
	var last map[string]int64
	for {
		m, err := mntr(ctx, addr)
		if err == nil {
			last = m
			if cond(m) {
				return m, nil
			}
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if time.Now().After(deadline) {
			if err == nil {
				err = errors.New("condition not met")
			}
			return last, fmt.Errorf("waiting for %s: %v (last: ephemerals %d, watches %d, connections %d)",
				what, err, last["zk_ephemerals_count"], last["zk_watch_count"], last["zk_num_alive_connections"])
		}
		time.Sleep(20 * time.Millisecond)
	}
}
