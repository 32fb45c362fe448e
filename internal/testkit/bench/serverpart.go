//go:build linux

package bench

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zklock/zklock/internal/testkit/zktest"
)

// serverPartSettle is the pause before each timed release: long enough for
// the machine to go idle, as it does before a handoff round's release, and
// short enough for a hundred rounds to take seconds.
const serverPartSettle = 50 * time.Millisecond

// measureServerPart times, from Go sessions in the driver and with no
// process started, the two things ZooKeeper does in a zklock handoff: a
// session closes and a watcher of its node hears of the deletion (the
// holder's release), and a waiter lists the queue (the re-list of a waiter
// deep in a queue). A handoff minus these and the probe's floor is what
// zklock's processes themselves add.
func measureServerPart(ctx context.Context, e *env, rounds, queueLen int) (*ServerPart, error) {
	// zklock runs on one P (internal/startup); the driver's client does the
	// same here, so that its goroutine hand-offs cost what zklock's do.
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))

	const root = "/bench/serverpart"
	for _, p := range []string{"/bench", root, root + "/queue", root + "/release"} {
		if _, err := e.zkConn.Create(p, nil, 0, zk.WorldACL(zk.PermAll)); err != nil && !errors.Is(err, zk.ErrNodeExists) {
			return nil, fmt.Errorf("create %s: %w", p, err)
		}
	}
	// The queue's nodes belong to the driver's session and go with it.
	for i := 0; i < queueLen; i++ {
		if _, err := e.zkConn.Create(root+"/queue/_c_00000000-0000-0000-0000-000000000000-lock-", nil,
			zk.FlagEphemeralSequential, zk.WorldACL(zk.PermAll)); err != nil {
			return nil, err
		}
	}

	var release, list []float64
	for i := 0; i < rounds && ctx.Err() == nil; i++ {
		holder, err := zktest.Dial(ctx, []string{e.zkAddr})
		if err != nil {
			return nil, err
		}
		node, err := holder.Create(root+"/release/n-", nil, zk.FlagEphemeralSequential, zk.WorldACL(zk.PermAll))
		if err != nil {
			holder.Close()
			return nil, err
		}
		_, _, ch, err := e.zkConn.GetW(node)
		if err != nil {
			holder.Close()
			return nil, err
		}
		time.Sleep(serverPartSettle)
		closed := make(chan struct{})
		start := time.Now()
		go func() {
			defer close(closed)
			holder.Close()
		}()
		select {
		case ev := <-ch:
			if ev.Type != zk.EventNodeDeleted {
				<-closed
				return nil, fmt.Errorf("watch on %s: got %v, want a deletion", node, ev.Type)
			}
			release = append(release, float64(time.Since(start))/1e6)
		case <-time.After(10 * time.Second):
			<-closed
			return nil, fmt.Errorf("no watch event for %s within 10s of its session's close", node)
		}
		<-closed

		start = time.Now()
		if _, _, err := e.zkConn.Children(root + "/queue"); err != nil {
			return nil, err
		}
		list = append(list, float64(time.Since(start))/1e6)
	}
	return &ServerPart{QueueLen: queueLen, CloseToWatch: distMS(release), ListQueue: distMS(list)}, ctx.Err()
}
