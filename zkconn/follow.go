package zkconn

import (
	"context"
	"errors"
	"net"
	"slices"
	"strings"

	"github.com/go-zookeeper/zk"
)

// # Following the ensemble as its members change
//
// The connect string names the servers a client may reconnect to. An
// ensemble migrated to new hosts with reconfig (add the new members,
// remove the old ones one by one) leaves a client that knows only the old
// hosts nowhere to go once the last of them stops: the session expires on
// the new members while the client dials the old ones, and a holder loses
// its lock. So a Client made with Options.FollowEnsemble watches
// /zookeeper/config and replaces the servers of its host list
// (hosts.go) by the members the configuration announces:
//
//   - A server of the list that is still a member stays as it was
//     written: its name is what TLS verifies and what DNS may move.
//   - A member missing from the list joins it, at the client address the
//     configuration gives (with TLS, at the list's own port: the
//     configuration carries the plain client port only).
//   - A server that is no longer a member leaves the list.
//
// Only a list that names members is followed. When no server of the
// connect string is a member (a load balancer, a proxy, an address
// translated on the way), the configuration's addresses may not be
// reachable from here at all, and the list stays as given.
//
// The list never empties: a configuration with no member that clients can
// reach (a standalone server, or a node that does not parse) changes
// nothing. Nothing here touches the session's clock: the loss guard's
// deadlines come from the last certified contact with the leader
// (quorum.go), and a change of members never extends them.

// followedFormat is the -v line for a changed list.
const followedFormat = "ensemble configuration %s: servers now %s"

// follow watches /zookeeper/config until the client closes or its session
// is lost, and updates the host list at every change.
func (c *Client) follow() {
	defer close(c.followed)
	following := false
	for {
		// Only on a connection that carries the session (see the
		// keepalive's sync for why).
		select {
		case <-c.done:
			return
		case <-c.sess.lost:
			return
		case <-c.sess.upChan():
		}
		data, _, ev, err := c.conn.GetW(configNode)
		if errors.Is(err, zk.ErrNoNode) {
			// A server before 3.5: no dynamic membership to follow.
			return
		}
		if err != nil {
			// A dropped connection: read again once the session is
			// back on another one. Wait for a change first, so that a
			// failure that is not a drop cannot spin.
			if !c.awaitFlip() {
				return
			}
			continue
		}
		following = c.applyMembership(data, following)
		select {
		case <-c.done:
			return
		case <-c.sess.lost:
			return
		case <-ev:
		}
	}
}

// awaitFlip waits for the connection's next change; false when the client
// closes or the session is lost first.
func (c *Client) awaitFlip() bool {
	_, flip := c.sess.connection()
	select {
	case <-c.done:
		return false
	case <-c.sess.lost:
		return false
	case <-flip:
		return true
	}
}

// applyMembership updates the host list from a configuration; following
// says whether an earlier one was followed, and the result whether this
// one is.
func (c *Client) applyMembership(data []byte, following bool) bool {
	m, problems := ParseMembership(data)
	for _, p := range problems {
		c.debugf("%s: %s", configNode, p)
	}
	if len(m.Members) == 0 {
		return following
	}
	ctx, cancel := context.WithTimeout(context.Background(), lookupTimeout)
	defer cancel()
	go func() {
		select {
		case <-c.done:
			cancel()
		case <-ctx.Done():
		}
	}()
	current := c.hosts.list()
	port := ""
	if c.opts.TLS != nil {
		port = commonPort(current)
	}
	next, named := followMembers(ctx, current, m.Members, port, net.DefaultResolver.LookupHost)
	if !following && !named {
		c.debugf("%s: no server of the connect string is a member (%s); not following it", configNode, memberAddrs(m.Members))
		return false
	}
	if c.hosts.replace(next) {
		c.debugf(followedFormat, m.Version, strings.Join(next, ","))
	}
	return true
}

// followMembers is the host list that follows members: the servers of
// current that are members, as written, then the members current lacks.
// With port set (TLS), servers match members by host alone and the
// members added take that port. named says whether any server of current
// is a member. An empty result is never returned: current stays then.
func followMembers(ctx context.Context, current []string, members []Member, port string, lookup func(context.Context, string) ([]string, error)) (next []string, named bool) {
	ips := resolver{ctx: ctx, lookup: lookup, cache: map[string][]string{}}
	matched := make([]bool, len(members))
	for _, s := range current {
		keep := false
		for i, m := range members {
			if ips.same(s, m.Addr, port != "") {
				matched[i], keep = true, true
			}
		}
		if keep {
			next = append(next, s)
		}
	}
	named = len(next) > 0
	for i, m := range members {
		if matched[i] {
			continue
		}
		addr := m.Addr
		if port != "" {
			host, _, _ := net.SplitHostPort(addr)
			addr = net.JoinHostPort(host, port)
		}
		if !slices.Contains(next, addr) {
			next = append(next, addr)
		}
	}
	if len(next) == 0 {
		return current, named
	}
	return next, named
}

// resolver tells whether two addresses name the same server: the same
// host (as written, or an address both resolve to) and, unless hostOnly,
// the same port. A name that does not resolve matches only itself.
type resolver struct {
	ctx    context.Context
	lookup func(context.Context, string) ([]string, error)
	cache  map[string][]string
}

func (r *resolver) same(a, b string, hostOnly bool) bool {
	ha, pa, err := net.SplitHostPort(a)
	if err != nil {
		return false
	}
	hb, pb, err := net.SplitHostPort(b)
	if err != nil {
		return false
	}
	if !hostOnly && pa != pb {
		return false
	}
	if strings.EqualFold(ha, hb) {
		return true
	}
	ia, ib := r.addrs(ha), r.addrs(hb)
	for _, x := range ia {
		if slices.Contains(ib, x) {
			return true
		}
	}
	return false
}

// addrs is the host's addresses, in a canonical form; cached.
func (r *resolver) addrs(host string) []string {
	if a, ok := r.cache[host]; ok {
		return a
	}
	var out []string
	if ip := net.ParseIP(host); ip != nil {
		out = []string{ip.String()}
	} else if found, err := r.lookup(r.ctx, host); err == nil {
		for _, f := range found {
			if ip := net.ParseIP(f); ip != nil {
				out = append(out, ip.String())
			}
		}
	}
	r.cache[host] = out
	return out
}

// commonPort is the port every server of the list uses, "" if they differ.
func commonPort(servers []string) string {
	port := ""
	for _, s := range servers {
		_, p, err := net.SplitHostPort(s)
		if err != nil || (port != "" && p != port) {
			return ""
		}
		port = p
	}
	return port
}

// memberAddrs lists the members' client addresses for a message.
func memberAddrs(members []Member) string {
	a := make([]string, len(members))
	for i, m := range members {
		a[i] = m.Addr
	}
	return strings.Join(a, ",")
}

// Membership reads the ensemble's membership from /zookeeper/config, with
// a description of each line ignored (see ParseMembership). A server
// before 3.5, which has no such node, has no members to read.
func (c *Client) Membership(ctx context.Context) (Membership, []string, error) {
	data, err := call(ctx, func() ([]byte, error) {
		data, _, err := c.conn.Get(configNode)
		return data, err
	})
	if errors.Is(err, zk.ErrNoNode) {
		return Membership{}, nil, nil
	}
	if err != nil {
		return Membership{}, nil, c.wrap(OpRead, configNode, err)
	}
	m, problems := ParseMembership(data)
	return m, problems, nil
}

// Comparison is how a list of servers stands against the membership.
type Comparison struct {
	// Strangers are the servers of the list that are not members.
	Strangers []string
	// Missing are the members the list lacks.
	Missing []Member
	// Followed is the list that names every member, as a client that
	// follows the ensemble would have it (see followMembers).
	Followed []string
}

// CompareMembers compares servers, a connect string's list, with the
// members; with tls, by host alone (the configuration carries the plain
// client port only).
func CompareMembers(ctx context.Context, servers []string, members []Member, tls bool) Comparison {
	port := ""
	if tls {
		port = commonPort(servers)
	}
	ips := resolver{ctx: ctx, lookup: net.DefaultResolver.LookupHost, cache: map[string][]string{}}
	var cmp Comparison
	for _, s := range servers {
		if !slices.ContainsFunc(members, func(m Member) bool { return ips.same(s, m.Addr, tls) }) {
			cmp.Strangers = append(cmp.Strangers, s)
		}
	}
	for _, m := range members {
		if !slices.ContainsFunc(servers, func(s string) bool { return ips.same(s, m.Addr, tls) }) {
			cmp.Missing = append(cmp.Missing, m)
		}
	}
	cmp.Followed, _ = followMembers(ctx, servers, members, port, ips.lookup)
	return cmp
}
