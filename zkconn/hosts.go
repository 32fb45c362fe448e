package zkconn

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
	"sync"
	"time"
)

// lookupTimeout bounds the start-up check that each server's name resolves,
// when the connect timeout does not bound it tighter. It matches
// go-zookeeper's own lookup timeout.
const lookupTimeout = 3 * time.Second

// hostList is zklock's go-zookeeper HostProvider. go-zookeeper's default
// provider resolves every name once, at start, and hands the dialer bare IP
// addresses; two things go wrong with that:
//
//   - The dialer cannot verify a TLS certificate against the name the user
//     wrote, and most ZooKeeper certificates carry DNS names only.
//   - One name that does not resolve (a server retired from DNS before every
//     crontab was updated) fails the whole connect, while the Java client
//     and Kazoo carry on with the servers that do resolve.
//
// hostList instead hands the dialer each server as written in the connect
// string. The dialer resolves it on every connect, so the TLS server name is
// the written host (an IP only when an IP was written) and a reconnect
// follows DNS changes. At start, names that do not resolve are dropped with
// one warning; only when none resolves is the connect string unusable.
//
// The rotation behaves as go-zookeeper expects of any provider: servers in
// the order given (Connect has shuffled them), and Next reports retryStart
// when it has tried all of them without a connect succeeding, so that the
// library pauses before the next round.
type hostList struct {
	ctx     context.Context
	timeout time.Duration
	warnf   func(format string, args ...any)

	mu      sync.Mutex
	servers []string
	next    int // index of the server Next returned last
	tried   int // servers tried in this round
}

func newHostList(ctx context.Context, timeout time.Duration, warnf func(string, ...any)) *hostList {
	if timeout <= 0 || timeout > lookupTimeout {
		timeout = lookupTimeout
	}
	return &hostList{ctx: ctx, timeout: timeout, warnf: warnf}
}

// Init keeps the servers whose host resolves.
func (h *hostList) Init(servers []string) error {
	ctx, cancel := context.WithTimeout(h.ctx, h.timeout)
	defer cancel()
	ok, bad := resolvable(ctx, servers, net.DefaultResolver.LookupHost)
	if len(ok) == 0 {
		return fmt.Errorf("no server in the connect string resolves: %s", strings.Join(bad, ", "))
	}
	if len(bad) > 0 && h.warnf != nil {
		h.warnf("skipping servers that do not resolve: %s", strings.Join(bad, ", "))
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.servers, h.next, h.tried = ok, -1, 0
	return nil
}

// resolvable looks up every server's host at once, so that one slow name
// costs no more than the lookup timeout in all. It returns the servers that
// resolve, in their order, and a description of each one that does not.
func resolvable(ctx context.Context, servers []string, lookup func(context.Context, string) ([]string, error)) (ok, bad []string) {
	errs := make([]error, len(servers))
	var wg sync.WaitGroup
	for i, s := range servers {
		host, _, err := net.SplitHostPort(s)
		if err != nil {
			errs[i] = err
			continue
		}
		if net.ParseIP(host) != nil {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = lookup(ctx, host)
		}()
	}
	wg.Wait()
	for i, s := range servers {
		if errs[i] == nil {
			ok = append(ok, s)
			continue
		}
		reason := errs[i].Error()
		var dnsErr *net.DNSError
		if errors.As(errs[i], &dnsErr) {
			// The resolver's address adds nothing the user can act on.
			reason = dnsErr.Err
		}
		bad = append(bad, fmt.Sprintf("%s (%s)", s, reason))
	}
	return ok, bad
}

// Len returns the number of servers kept.
func (h *hostList) Len() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.servers)
}

// Next returns the next server, as written, and whether it begins a new
// round: every server has been tried since the round began without a
// connect succeeding.
func (h *hostList) Next() (server string, retryStart bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.next = (h.next + 1) % len(h.servers)
	h.tried++
	if h.tried > len(h.servers) {
		retryStart, h.tried = true, 1
	}
	return h.servers[h.next], retryStart
}

// Connected starts a new round at the server just connected, so that losing
// it tries every other server before pausing.
func (h *hostList) Connected() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.tried = 1
}

// list returns a copy of the servers.
func (h *hostList) list() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.servers)
}

// replace makes servers the list (follow.go) and reports whether it
// changed. The round starts again, so that every server of the new list
// is tried before the library pauses; the connection in use is not
// touched: a member that leaves closes its clients' connections itself,
// and the next connect takes the new list.
func (h *hostList) replace(servers []string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(servers) == 0 || slices.Equal(servers, h.servers) {
		return false
	}
	h.servers, h.next, h.tried = slices.Clone(servers), -1, 0
	return true
}
