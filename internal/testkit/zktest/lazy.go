package zktest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"
)

// lazyStartTimeout bounds starting a Lazy server: a JVM on a loaded
// machine takes seconds, a broken installation fails well before this.
const lazyStartTimeout = 2 * time.Minute

// Lazy is a server that the tests of one package share, started by the
// first test that asks for it rather than by TestMain: a test that needs
// no server, and a run of only such tests (go test -short), starts no JVM.
// The zero Lazy starts a standalone server with the default Options. Stop
// it once the package's tests are done.
type Lazy struct {
	Options Options
	// Members is the number of servers: 0 or 1 for a standalone server,
	// more for an ensemble.
	Members int
	// Roots are plain persistent nodes made as soon as the server is up,
	// for the tests' paths to go under. Were a root a container, as zklock
	// makes the parents it needs, the server would reap it whenever one
	// test's last node under it went, and a test that had just seen it
	// would fail to create its own path below it ("node does not exist").
	Roots []string

	once sync.Once
	mu   sync.Mutex
	c    *Cluster
	err  error
	took time.Duration
}

// Get returns the server, starting it on the first call. A server that
// could not start is an error for every caller.
func (l *Lazy) Get() (*Cluster, error) {
	l.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), lazyStartTimeout)
		defer cancel()
		start := time.Now()
		var c *Cluster
		var err error
		if l.Members > 1 {
			c, err = StartEnsemble(ctx, l.Members, l.Options)
		} else {
			c, err = StartStandalone(ctx, l.Options)
		}
		if err == nil {
			err = makeRoots(ctx, c, l.Roots)
		}
		l.mu.Lock()
		l.c, l.err, l.took = c, err, time.Since(start)
		l.mu.Unlock()
	})
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.c, l.err
}

// Need returns the server for a test, starting it on first use. Under
// -short it skips the test (see NeedServer); a server that cannot start
// fails it.
func (l *Lazy) Need(tb TB) *Cluster {
	tb.Helper()
	NeedServer(tb)
	c, err := l.Get()
	if err != nil {
		tb.Fatal("these tests need a real ZooKeeper: ", err)
	}
	return c
}

// Started returns the server if Get has started one, and how long its
// start took; nil otherwise.
func (l *Lazy) Started() (*Cluster, time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.c, l.took
}

// Stop stops the server, if one was started.
func (l *Lazy) Stop() {
	if c, _ := l.Started(); c != nil {
		_ = c.Stop()
	}
}

// makeRoots creates each of roots on c as a plain persistent node.
func makeRoots(ctx context.Context, c *Cluster, roots []string) error {
	if len(roots) == 0 {
		return nil
	}
	conn, err := Dial(ctx, c.Addrs())
	if err != nil {
		return err
	}
	defer conn.Close()
	for _, r := range roots {
		if _, err := conn.Create(r, nil, 0, zk.WorldACL(zk.PermAll)); err != nil && !errors.Is(err, zk.ErrNodeExists) {
			return fmt.Errorf("zktest: making %s: %w", r, err)
		}
	}
	return nil
}
