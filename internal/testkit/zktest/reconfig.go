package zktest

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/go-zookeeper/zk"
)

// Membership changes on a live ensemble (Options.Reconfig), as an operator
// migrates ZooKeeper to new hosts: start a new server whose file lists the
// current members and itself, which joins the leader as a non-voting
// follower and syncs; make it a member with reconfig -add; later take an
// old member out with reconfig -remove and stop it. The servers keep the
// membership in their dynamic configuration files and publish it in
// /zookeeper/config, the node a client reads to follow the ensemble.

// configNode is where the servers publish the membership.
const configNode = "/zookeeper/config"

// memberLine is the value of a server.N line: its quorum and election
// ports, and under Reconfig its role and client address, which the
// dynamic configuration carries instead of clientPort.
func memberLine(o Options, quorum, election, client int) string {
	if o.Reconfig {
		return fmt.Sprintf("127.0.0.1:%d:%d:participant;127.0.0.1:%d", quorum, election, client)
	}
	return fmt.Sprintf("127.0.0.1:%d:%d", quorum, election)
}

// Members reads the ids of the ensemble's current members from
// /zookeeper/config, as the running servers publish it.
func (c *Cluster) Members(ctx context.Context) ([]int, error) {
	data, err := c.readConfig(ctx, nil)
	if err != nil {
		return nil, err
	}
	return memberIDs(data), nil
}

// Join starts a new server and adds it to the ensemble with reconfig
// -add; it returns once the new member is part of the committed
// configuration. The cluster must have been started with Options.Reconfig.
// Not safe to call at the same time as other Cluster methods.
func (c *Cluster) Join(ctx context.Context) (*Server, error) {
	if len(c.servers) == 0 || !c.servers[0].opts.Reconfig {
		return nil, errors.New("zktest: Join needs an ensemble started with Options.Reconfig")
	}
	opts := c.servers[0].opts
	ctx, cancel := context.WithTimeout(ctx, opts.StartTimeout)
	defer cancel()
	data, err := c.readConfig(ctx, nil)
	if err != nil {
		return nil, err
	}
	ports, err := pickPorts(3)
	if err != nil {
		return nil, err
	}
	id := 0
	for _, s := range c.servers {
		id = max(id, s.id)
	}
	id++
	line := fmt.Sprintf("server.%d=%s", id, memberLine(opts, ports[1], ports[2], ports[0]))
	// The current members as the ensemble publishes them, and itself.
	var peers []string
	for _, l := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(l, "server.") {
			peers = append(peers, l)
		}
	}
	peers = append(peers, line)
	dir := filepath.Join(c.baseDir, fmt.Sprintf("server-%d", id))
	s := &Server{
		id:         id,
		clientPort: ports[0],
		dir:        dir,
		dataDir:    filepath.Join(dir, "data"),
		cfgPath:    filepath.Join(dir, "zoo.cfg"),
		logPath:    filepath.Join(dir, "zookeeper.log"),
		inst:       c.servers[0].inst,
		opts:       opts,
	}
	if opts.LogDir != "" {
		s.logPath = filepath.Join(opts.LogDir, fmt.Sprintf("zktest-%d-join-server-%d.log", clusterSeq.Load(), id))
	}
	if err := s.writeFiles(peers); err != nil {
		return nil, fmt.Errorf("zktest: preparing server %d: %w", id, err)
	}
	c.servers = append(c.servers, s)
	if err := s.launch(); err != nil {
		return nil, err
	}
	if err := waitServing(ctx, []*Server{s}, false); err != nil {
		return nil, err
	}
	err = c.reconfig(ctx, nil, func(conn *zk.Conn) error {
		_, err := conn.IncrementalReconfig([]string{line}, nil, -1)
		return err
	}, func(ids []int) bool { return slices.Contains(ids, id) })
	if err != nil {
		return nil, fmt.Errorf("zktest: adding server %d: %w", id, err)
	}
	return s, nil
}

// Leave takes s out of the ensemble with reconfig -remove and returns once
// the committed configuration no longer lists it. It leaves s running, as
// an operator stops the server only after the reconfig; stop it with Stop
// or Kill.
func (c *Cluster) Leave(ctx context.Context, s *Server) error {
	ctx, cancel := context.WithTimeout(ctx, s.opts.StartTimeout)
	defer cancel()
	err := c.reconfig(ctx, s, func(conn *zk.Conn) error {
		_, err := conn.IncrementalReconfig(nil, []string{strconv.Itoa(s.id)}, -1)
		return err
	}, func(ids []int) bool { return !slices.Contains(ids, s.id) })
	if err != nil {
		return fmt.Errorf("zktest: removing server %d: %w", s.id, err)
	}
	return nil
}

// reconfig runs op on a session with the members other than skip until
// done holds for the membership it publishes. A reconfig that removes the
// leader ends its leadership, and one that cannot reach a quorum of the
// new members yet is refused; both are retried, and done keeps a retry
// from repeating one that took effect before its reply was lost.
func (c *Cluster) reconfig(ctx context.Context, skip *Server, op func(*zk.Conn) error, done func([]int) bool) error {
	var last error
	for {
		data, err := c.readConfig(ctx, skip)
		if err == nil && done(memberIDs(data)) {
			return nil
		}
		if err == nil {
			err = c.withConn(ctx, skip, op)
		}
		if err != nil {
			last = err
		}
		if err := sleepCtx(ctx, pollInterval); err != nil {
			return errors.Join(err, last)
		}
	}
}

// readConfig reads /zookeeper/config through the running servers other
// than skip, after a sync so that the read sees the last committed
// configuration.
func (c *Cluster) readConfig(ctx context.Context, skip *Server) ([]byte, error) {
	var data []byte
	err := c.withConn(ctx, skip, func(conn *zk.Conn) error {
		if _, err := conn.Sync(configNode); err != nil {
			return err
		}
		d, _, err := conn.Get(configNode)
		data = d
		return err
	})
	return data, err
}

// withConn runs f on a fresh session with the running servers other than
// skip.
func (c *Cluster) withConn(ctx context.Context, skip *Server, f func(*zk.Conn) error) error {
	var addrs []string
	for _, s := range c.servers {
		if s != skip && s.Running() {
			addrs = append(addrs, s.Addr())
		}
	}
	if len(addrs) == 0 {
		return errors.New("zktest: no server is running")
	}
	dctx, cancel := context.WithTimeout(ctx, probeTimeout*5)
	defer cancel()
	conn, err := Dial(dctx, addrs)
	if err != nil {
		return err
	}
	defer conn.Close()
	return f(conn)
}

// memberIDs lists the ids of the server.N lines of a configuration.
func memberIDs(data []byte) []int {
	var ids []int
	for _, l := range strings.Split(string(data), "\n") {
		k, _, ok := strings.Cut(l, "=")
		if n, found := strings.CutPrefix(k, "server."); ok && found {
			if id, err := strconv.Atoi(n); err == nil {
				ids = append(ids, id)
			}
		}
	}
	return ids
}
