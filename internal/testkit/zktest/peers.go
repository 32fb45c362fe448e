package zktest

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"strconv"
	"sync/atomic"
)

// Partitions between ensemble members (Options.PeerProxies).
//
// Every directed pair of servers (i to j) gets two proxies of its own, one
// in front of j's quorum port and one in front of j's election port, and
// server i's zoo.cfg names those proxies as j's addresses. Its own line
// keeps its real ports, which it binds. With reconfiguration disabled each
// server takes the member list from its own file alone, so the files may
// differ. A follower reaches its leader only through its own quorum proxy;
// the leader never connects to a follower.
//
// Leader election needs one more step. Of two servers that connect to
// each other, only the connection opened by the higher id survives: the
// higher id drops a connection from a lower one and dials back the
// election address that the lower one sent in its opening message, which
// is the real one from the lower one's own line. That dial-back would skip
// the proxies, so the proxy from i to j rewrites the address in i's
// opening message to the proxy from j to i.

// peerLink is the pair of proxies that carries server from's traffic to
// server to (0-based indices).
type peerLink struct {
	from, to         int
	quorum, election *Proxy
}

func (l *peerLink) proxies() []*Proxy { return []*Proxy{l.quorum, l.election} }

// Election protocol versions (QuorumCnxManager): a non-negative first long
// is a bare server id from servers older than 3.5, which send no address.
const maxElectionAddr = 4096

// openPeerLinks creates the proxies for every directed pair of n servers
// whose quorum and election ports are given, and returns them with the
// member lines of each server's zoo.cfg.
func openPeerLinks(n int, quorum, election []int) ([]*peerLink, [][]string, error) {
	links := make([]*peerLink, 0, n*(n-1))
	at := map[[2]int]*peerLink{}
	closeAll := func() {
		for _, l := range links {
			for _, p := range l.proxies() {
				if p != nil {
					p.Close()
				}
			}
		}
	}
	// Quorum proxies first, then election proxies, whose rewrite needs the
	// address of the proxy for the opposite direction.
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			if i == j {
				continue
			}
			q, err := listenProxy("127.0.0.1:"+strconv.Itoa(quorum[j]), true, nil)
			if err != nil {
				closeAll()
				return nil, nil, err
			}
			l := &peerLink{from: i, to: j, quorum: q}
			links = append(links, l)
			at[[2]int{i, j}] = l
		}
	}
	// An election proxy's listener must exist before its opposite's rewrite
	// can name it, so listen first and plug in the rewrite afterwards.
	back := map[[2]int]*atomic.Pointer[string]{}
	for _, l := range links {
		adv := new(atomic.Pointer[string])
		back[[2]int{l.from, l.to}] = adv
		e, err := listenProxy("127.0.0.1:"+strconv.Itoa(election[l.to]), true, electionGreeting(adv))
		if err != nil {
			closeAll()
			return nil, nil, err
		}
		l.election = e
	}
	for _, l := range links {
		addr := at[[2]int{l.to, l.from}].election.Addr()
		back[[2]int{l.from, l.to}].Store(&addr)
	}
	members := make([][]string, n)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			if i == j {
				members[i] = append(members[i], fmt.Sprintf("127.0.0.1:%d:%d", quorum[i], election[i]))
				continue
			}
			l := at[[2]int{i, j}]
			members[i] = append(members[i], fmt.Sprintf("%s:%s", l.quorum.Addr(), portOf(l.election.Addr())))
		}
	}
	return links, members, nil
}

func portOf(addr string) string {
	for i := len(addr) - 1; i >= 0; i-- {
		if addr[i] == ':' {
			return addr[i+1:]
		}
	}
	return addr
}

// electionGreeting rewrites a server's opening message on an election
// connection (protocol version, server id, length-prefixed "host:port")
// so that it advertises the address in advertise, which is set once every
// proxy listens, before any server starts.
func electionGreeting(advertise *atomic.Pointer[string]) func(*bufio.Reader) ([]byte, error) {
	return func(r *bufio.Reader) ([]byte, error) {
		var head [20]byte // version, sid, address length
		if _, err := io.ReadFull(r, head[:8]); err != nil {
			return head[:0], err
		}
		if int64(binary.BigEndian.Uint64(head[:8])) >= 0 {
			return head[:8], nil // a bare server id: nothing to rewrite
		}
		if _, err := io.ReadFull(r, head[8:]); err != nil {
			return nil, err
		}
		size := int32(binary.BigEndian.Uint32(head[16:]))
		if size <= 0 || size > maxElectionAddr {
			return head[:], nil // not what we expect: pass it on untouched
		}
		if _, err := io.ReadFull(r, make([]byte, size)); err != nil {
			return nil, err
		}
		adv := *advertise.Load()
		out := append([]byte(nil), head[:16]...)
		out = binary.BigEndian.AppendUint32(out, uint32(len(adv)))
		return append(out, adv...), nil
	}
}

// Isolate partitions server i (0-based) from the other members: fault is
// applied to every proxy that carries traffic from i to another member or
// from another member to i, on both the quorum and the election port.
// Pass (*Proxy).Blackhole for a network partition (packets vanish, and
// each side notices only through its own timeouts: a follower after
// SyncLimit ticks without hearing from its leader), or (*Proxy).Cut for
// peers that are refused at once. Client ports are not affected. It panics
// if the cluster was not started with Options.PeerProxies.
func (c *Cluster) Isolate(i int, fault func(*Proxy)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.mustHaveLinks()
	c.isolated[i] = true
	for _, l := range c.links {
		if l.from == i || l.to == i {
			for _, p := range l.proxies() {
				fault(p)
			}
		}
	}
}

// rejoin ends server i's isolation. Its links to members that are not
// isolated themselves are reset (connections open during the fault are
// closed, since blackholed bytes leave their streams torn) and healed, so
// the servers reconnect as after a real partition.
func (c *Cluster) rejoin(i int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.mustHaveLinks()
	delete(c.isolated, i)
	for _, l := range c.links {
		if (l.from == i && !c.isolated[l.to]) || (l.to == i && !c.isolated[l.from]) {
			for _, p := range l.proxies() {
				p.Cut()
				p.Heal()
			}
		}
	}
}

// HealAll ends every isolation (see rejoin).
func (c *Cluster) HealAll() {
	c.mu.Lock()
	c.mustHaveLinks()
	var ids []int
	for i := range c.isolated {
		ids = append(ids, i)
	}
	c.mu.Unlock()
	for _, i := range ids {
		c.rejoin(i)
	}
}

func (c *Cluster) mustHaveLinks() {
	if c.links == nil {
		panic("zktest: Isolate, rejoin and HealAll need a cluster started with Options.PeerProxies")
	}
}

func (c *Cluster) closeLinks() {
	for _, l := range c.links {
		for _, p := range l.proxies() {
			p.Close()
		}
	}
	c.links = nil
}
