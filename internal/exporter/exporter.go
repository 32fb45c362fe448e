package exporter

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/zklock/zklock/internal/follow"
	"github.com/zklock/zklock/zkconn"
)

// DefaultListen is where the exporter listens unless told otherwise. Its
// port is one that Prometheus's list of default port allocations gives
// to no exporter.
const DefaultListen = "127.0.0.1:9713"

// DefaultMaxPaths is how many lock paths are exported unless told: enough
// for a fleet's locks, few enough that a runaway tree (a lock path per
// job id) cannot flood Prometheus.
const DefaultMaxPaths = 1000

// Options describe one exporter.
type Options struct {
	Conn zkconn.Options
	// Path is the node below which every lock is exported.
	Path string
	// Listen is the host:port to serve /metrics on.
	Listen string
	// MaxPaths is how many lock paths are exported at most, the first in
	// sorted order; the rest are counted in
	// zklock_exporter_lock_paths_dropped.
	MaxPaths int
	// Listening, if set, is told the address served once it listens
	// (the port chosen, for ":0").
	Listening func(net.Addr)
	// Warnf, if set, is told why the watch failed each time it does.
	Warnf func(format string, a ...any)
}

// Pauses between two watches, after one failed (servers unreachable at
// start, the path unreadable): from the first to the last, doubling.
const (
	firstRetry = 500 * time.Millisecond
	lastRetry  = 30 * time.Second
)

// Run serves /metrics until ctx ends; that is its normal end, and it
// returns nil. Only failing to listen is an error: the servers being away,
// at first or later, is reported in the series and waited out.
func Run(ctx context.Context, o Options) error {
	if o.MaxPaths <= 0 {
		return fmt.Errorf("the path limit must be at least 1, not %d", o.MaxPaths)
	}
	ln, err := net.Listen("tcp", o.Listen)
	if err != nil {
		return err
	}
	e := &exporter{o: o, st: state{state: stateConnecting}}
	mux := http.NewServeMux()
	mux.HandleFunc("/metrics", e.serveMetrics)
	mux.HandleFunc("/", e.serveIndex)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	if o.Listening != nil {
		o.Listening(ln.Addr())
	}

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		e.follow(ctx)
	}()
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	select {
	case <-ctx.Done():
	case err = <-served:
	}
	cancel()
	shut, done := context.WithTimeout(context.Background(), 5*time.Second)
	defer done()
	_ = srv.Shutdown(shut)
	wg.Wait()
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}

// exporter is one Run: the state a scrape reports.
type exporter struct {
	o  Options
	mu sync.Mutex
	st state
}

// follow keeps the state current with a watch of the tree until ctx
// ends, starting a new watch whenever one fails.
func (e *exporter) follow(ctx context.Context) {
	pause := firstRetry
	for {
		err := follow.Run(ctx, follow.Options{Conn: e.o.Conn, Path: e.o.Path, Show: e.show})
		if ctx.Err() != nil {
			return
		}
		e.mu.Lock()
		e.st.state = stateConnecting
		wasUp := e.st.read
		e.mu.Unlock()
		if err != nil && e.o.Warnf != nil {
			e.o.Warnf("watching %s: %v; trying again", e.o.Path, err)
		}
		if wasUp {
			pause = firstRetry
		}
		t := time.NewTimer(pause)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		pause = min(2*pause, lastRetry)
	}
}

// show takes the watch's snapshot: a tree read while connected, or the
// last one again while no session carries it.
func (e *exporter) show(s follow.Snapshot) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.st.snap, e.st.read = s, true
	if s.Down.IsZero() {
		e.st.state, e.st.lastOK = stateConnected, time.Now()
	} else {
		e.st.state = stateDisconnected
	}
	return nil
}

func (e *exporter) serveMetrics(w http.ResponseWriter, r *http.Request) {
	e.mu.Lock()
	st := e.st
	e.mu.Unlock()
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	_ = write(w, families(st, time.Now(), e.o.MaxPaths))
}

func (e *exporter) serveIndex(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/" {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_, _ = fmt.Fprint(w, `<html><head><title>zklock exporter</title></head><body><a href="/metrics">metrics</a></body></html>`+"\n")
}
