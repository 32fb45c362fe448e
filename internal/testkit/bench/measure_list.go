//go:build linux

package bench

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zklock/zklock/internal/testkit/zktest"
)

// Shape of the list test's tree: each lock is a container holding
// listPerLock ephemeral contenders (one holder, the rest waiting), and
// listGroup locks share a parent, so the tree is both wide and deep enough
// to need a walk.
const (
	listPerLock = 3
	listGroup   = 100
	// listCreators bounds the requests in flight while the tree is built.
	listCreators = 128
)

// measureList times `zklock list` on trees of cfg.ListSizes znodes, and
// ZooKeeper's own CLI walking the same tree (`zkCli.sh ls -R`, one
// getChildren per node, no data), each also on an empty path to show what
// start-up and connecting cost apart from the walk.
func measureList(ctx context.Context, e *env, cfg Config, t *Tool, zklockBin string, res *Results) error {
	cli, cliErr := zkCliArgv(e.zkAddr)
	if cliErr != nil {
		res.Notes = append(res.Notes, "the list test has no peer: "+cliErr.Error())
	}
	var errs []error
	for _, n := range cfg.ListSizes {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		r := ListResult{Znodes: n, Locks: max(n/(listPerLock+1), 1), Runs: max(cfg.ListRuns, 1)}
		if err := listOne(ctx, e, t, zklockBin, cli, &r); err != nil {
			r.Error = err.Error()
			errs = append(errs, fmt.Errorf("%d znodes: %w", n, err))
		}
		res.List = append(res.List, r)
		logf("   %6d znodes: zklock list %7.1f ms (empty path %5.1f ms), zkCli ls -R %7.1f ms (empty path %6.1f ms)%s",
			n, r.ZklockMS, r.ZklockEmptyMS, r.PeerMS, r.PeerEmptyMS, errSuffix(r.Error))
	}
	return errors.Join(errs...)
}

// zkCliArgv is ZooKeeper's CLI (zkCli.sh's main class) on the server's
// jars, connecting to addr.
func zkCliArgv(addr string) ([]string, error) {
	inst, err := zktest.Locate()
	if err != nil {
		return nil, err
	}
	return []string{inst.Java, "-cp", strings.Join(inst.Classpath, ":"), "org.apache.zookeeper.ZooKeeperMain", "-server", addr}, nil
}

func listOne(ctx context.Context, e *env, t *Tool, zklockBin string, cli []string, r *ListResult) error {
	root := fmt.Sprintf("/benchlist%d", r.Znodes)
	conn, err := zktest.Dial(ctx, []string{e.zkAddr})
	if err != nil {
		return err
	}
	// Closing the session deletes the contenders; the containers go with
	// the server's next reaping pass.
	defer conn.Close()
	start := time.Now()
	if err := buildListTree(conn, root, r.Locks); err != nil {
		return fmt.Errorf("building the tree: %w", err)
	}
	logf("   built %s (%d locks) in %s", root, r.Locks, time.Since(start).Round(time.Millisecond))
	timeRuns := func(argv []string, log string) (float64, error) {
		var ms []float64
		for range r.Runs {
			d, err := e.run(ctx, t, argv, nil, log)
			if err != nil {
				return 0, err
			}
			ms = append(ms, float64(d)/1e6)
		}
		sort.Float64s(ms)
		return ms[len(ms)/2], nil
	}
	zl := []string{zklockBin, "list", "--servers", e.zkAddr, "--json", "--path"}
	if r.ZklockMS, err = timeRuns(append(zl, root), "list-zklock.log"); err != nil {
		return err
	}
	if r.ZklockEmptyMS, err = timeRuns(append(zl, root+"-empty"), "list-zklock.log"); err != nil {
		return err
	}
	if cli == nil {
		return nil
	}
	if r.PeerMS, err = timeRuns(append(cli, "ls", "-R", root), "list-zkcli.log"); err != nil {
		return err
	}
	r.PeerEmptyMS, err = timeRuns(append(cli, "ls", "-R", "/zookeeper/quota"), "list-zkcli.log")
	return err
}

// buildListTree creates locks lock paths under root, listGroup to a
// parent, each with listPerLock ephemeral contenders of this session.
func buildListTree(conn *zk.Conn, root string, locks int) error {
	acl := zk.WorldACL(zk.PermAll)
	mkdir := func(p string) error {
		_, err := conn.CreateContainer(p, nil, zk.FlagContainer, acl)
		if errors.Is(err, zk.ErrNodeExists) {
			return nil
		}
		return err
	}
	if err := mkdir(root); err != nil {
		return err
	}
	for g := 0; g*listGroup < locks; g++ {
		if err := mkdir(fmt.Sprintf("%s/g%d", root, g)); err != nil {
			return err
		}
	}
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
		sem  = make(chan struct{}, listCreators)
	)
	for i := range locks {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			p := fmt.Sprintf("%s/g%d/l%d", root, i/listGroup, i)
			err := mkdir(p)
			for k := 0; err == nil && k < listPerLock; k++ {
				_, err = conn.Create(p+"/_c_11111111-2222-4333-8444-555555555555-lock-", []byte("bench"), zk.FlagEphemeralSequential, acl)
			}
			if err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}
