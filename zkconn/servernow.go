package zkconn

import (
	"context"

	"github.com/go-zookeeper/zk"
)

// ExistsW checks a node and leaves a watch on it whether or not it exists
// (unlike GetW): its creation, a write to it or its deletion fires it.
func (c *Client) ExistsW(ctx context.Context, p string) (bool, *zk.Stat, <-chan zk.Event, error) {
	type r struct {
		ok bool
		st *zk.Stat
		ch <-chan zk.Event
	}
	res, err := call(ctx, func() (r, error) {
		ok, st, ch, err := c.conn.ExistsW(c.abs(p))
		return r{ok, st, ch}, err
	})
	return res.ok, res.st, res.ch, c.wrap(OpCheck, p, err)
}

// ServerNow reads the ensemble's clock with one write that leaves nothing
// behind: in one transaction it creates the node p, writes it, and deletes
// it, and returns the stat of the write, whose mtime the leader set from
// its clock and whose mzxid carries its epoch. Nobody else can see the
// node (a transaction is applied whole), so it joins no queue and holds
// no place; a child watch on p's parent fires, as for any child that
// comes and goes.
func (c *Client) ServerNow(ctx context.Context, p string) (*zk.Stat, error) {
	abs := c.abs(p)
	res, err := call(ctx, func() ([]zk.MultiResponse, error) {
		return c.conn.Multi(
			&zk.CreateRequest{Path: abs, Acl: c.acl, Flags: zk.FlagEphemeral},
			&zk.SetDataRequest{Path: abs, Version: -1},
			&zk.DeleteRequest{Path: abs, Version: -1})
	})
	if err == nil {
		for _, r := range res {
			if r.Error != nil {
				err = r.Error
				break
			}
		}
	}
	if err != nil {
		return nil, c.wrap(OpWrite, p, err)
	}
	if len(res) < 2 || res[1].Stat == nil {
		return nil, c.wrap(OpWrite, p, zk.ErrUnknown)
	}
	return res[1].Stat, nil
}
