package zkconn

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zklock/zklock/internal/testkit/zktest"
)

// TestLaggingFollowerIsNoLoss: a follower of a healthy ensemble that lags
// behind the client (its link to the leader delayed) refuses the client's
// resume, as a restored ensemble would. The probe must find the session
// known and the follower caught up after a sync, and the session must
// carry on.
func TestLaggingFollowerIsNoLoss(t *testing.T) {
	ctx, c := zktest.OwnEnsemble(t, 2*time.Minute, zktest.Options{PeerProxies: true})
	leader, follower := followerOf(t, ctx, c)
	toLeader := zktest.NewProxyT(t, leader.Addr())
	toFollower := zktest.NewProxyT(t, follower.Addr())
	toFollower.Cut() // the session starts on the leader
	var mu sync.Mutex
	var debug []string
	cs := ConnString{Servers: []string{toLeader.Addr(), toFollower.Addr()}}
	cl, err := Dial(ctx, Options{ConnString: cs, SessionTimeout: 4 * time.Second,
		Debugf: func(format string, args ...any) {
			mu.Lock()
			debug = append(debug, fmt.Sprintf(format, args...))
			mu.Unlock()
		}})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	id := cl.SessionID()
	toFollower.Heal()
	// The follower hears of every commit 150ms late, and answers its
	// leader as late: well within syncLimit, it goes on serving.
	c.Isolate(follower.ID()-1, func(p *zktest.Proxy) { p.SetDelay(150 * time.Millisecond) })
	path := "/" + strings.ReplaceAll(zktest.TestPath(t, "/lag")[1:], "/", "-")
	for i := 0; ; i++ {
		if i == 20 {
			t.Fatal("the follower never refused the session for being behind")
		}
		// A write the follower has not applied yet, then the session
		// moves to it at once.
		if _, err := cl.Create(ctx, fmt.Sprintf("%s-%d", path, i), nil, zk.FlagEphemeral); err != nil {
			t.Fatal(err)
		}
		toLeader.Cut()
		zktest.Eventually(t, 20*time.Second, "the session to resume on the follower", func() bool {
			return cl.Server() == toFollower.Addr() && cl.sess.isUp()
		})
		if b, _ := os.ReadFile(follower.LogPath()); bytes.Contains(b, []byte("as it has seen zxid")) {
			break
		}
		toLeader.Heal()
		toFollower.Cut()
		zktest.Eventually(t, 20*time.Second, "the session back on the leader", func() bool {
			return cl.Server() == toLeader.Addr() && cl.sess.isUp()
		})
		toFollower.Heal()
	}
	select {
	case <-cl.Lost():
		t.Fatalf("a lagging follower's refusal lost the session: %v", cl.LostErr())
	default:
	}
	if cl.SessionID() != id {
		t.Fatalf("session 0x%x replaced by 0x%x", id, cl.SessionID())
	}
	if ok, _, err := cl.Exists(ctx, path+"-0"); err != nil || !ok {
		t.Fatalf("the session's node after the resume: %v, %v", ok, err)
	}
	mu.Lock()
	defer mu.Unlock()
	probed := false
	for _, l := range debug {
		if strings.Contains(l, "it lagged behind") {
			probed = true
			t.Logf("-v: %s", l)
		}
	}
	if !probed {
		t.Errorf("no probe found the follower merely behind; -v said: %q", debug)
	}
}
