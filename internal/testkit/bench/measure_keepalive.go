//go:build linux

package bench

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// keepaliveTimeout is the session timeout of the idle holder whose cost is
// measured; the cost per T does not depend on it, a short one keeps the
// phase short.
const keepaliveTimeout = 4 * time.Second

// measureKeepalive counts the packets one idle zklock holder sends its
// server per session timeout T: the keepalive's syncs, which keep the
// quorum-confirmed contact fresh, and go-zookeeper's pings. It must run
// when the holder is the server's only client.
func measureKeepalive(ctx context.Context, e *env, cfg Config, t *Tool, addr string, res *Results) error {
	k := &KeepaliveResult{SessionTimeoutMS: keepaliveTimeout.Milliseconds(), Periods: max(cfg.KeepalivePeriods, 1)}
	res.Keepalive = k
	if err := keepaliveOne(ctx, e, t, addr, k); err != nil {
		k.Error = err.Error()
		return err
	}
	logf("   one idle holder: %.1f packets per session timeout", k.PacketsPerT)
	return nil
}

func keepaliveOne(ctx context.Context, e *env, t *Tool, addr string, k *KeepaliveResult) error {
	dir, err := os.MkdirTemp(filepath.Dir(e.lockDir), "keepalive-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	fifo, err := makeFIFO(dir, "keepalive.fifo")
	if err != nil {
		return err
	}
	argv := t.Argv("keepalive", e.shBin, "-c", holdOnlyScript, fifo)
	// zklock's global flags may follow the subcommand.
	argv = append(append(append([]string{}, argv[:2]...), "--session-timeout", keepaliveTimeout.String()), argv[2:]...)
	holder, err := e.spawn(ctx, t, argv, nil, nil, "keepalive.log")
	if err != nil {
		return err
	}
	finish := func() error {
		rerr := fifoRelease(ctx, fifo, 10*time.Second)
		if rerr != nil {
			holder.cmd.Process.Signal(syscall.SIGTERM)
		}
		_, werr := holder.wait()
		return errors.Join(rerr, werr)
	}
	if _, err := waitMntr(ctx, addr, time.Minute, "the idle holder", func(m map[string]int64) bool {
		return m["zk_ephemerals_count"] == 1
	}); err != nil {
		return errors.Join(err, finish())
	}
	// Past the connect and the first requests.
	time.Sleep(keepaliveTimeout / 2)
	before, err := mntr(ctx, addr)
	if err != nil {
		return errors.Join(err, finish())
	}
	time.Sleep(time.Duration(k.Periods) * keepaliveTimeout)
	after, err := mntr(ctx, addr)
	if err != nil {
		return errors.Join(err, finish())
	}
	k.PacketsPerT = float64(after["zk_packets_received"]-before["zk_packets_received"]) / float64(k.Periods)
	return finish()
}
