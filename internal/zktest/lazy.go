package zktest

import (
	"context"
	"sync"
	"time"
)

// lazyStartTimeout bounds starting a Lazy server: a JVM on a loaded
// machine takes seconds, a broken installation fails well before this.
const lazyStartTimeout = 2 * time.Minute

// Lazy is a standalone server that the tests of one package share, started
// by the first test that asks for it rather than by TestMain: a test that
// needs no server, and a run of only such tests (go test -short), starts
// no JVM. The zero Lazy starts a server with the default Options. Stop it
// once the package's tests are done.
type Lazy struct {
	Options Options

	once sync.Once
	mu   sync.Mutex
	c    *Cluster
	err  error
}

// Get returns the server, starting it on the first call. A server that
// could not start is an error for every caller.
func (l *Lazy) Get() (*Cluster, error) {
	l.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), lazyStartTimeout)
		defer cancel()
		c, err := StartStandalone(ctx, l.Options)
		l.mu.Lock()
		l.c, l.err = c, err
		l.mu.Unlock()
	})
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.c, l.err
}

// Started reports whether Get has started a server.
func (l *Lazy) Started() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.c != nil
}

// Stop stops the server, if one was started.
func (l *Lazy) Stop() {
	l.mu.Lock()
	c := l.c
	l.mu.Unlock()
	if c != nil {
		_ = c.Stop()
	}
}
