package zktest

import (
	"context"
	"sync"
	"time"
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
