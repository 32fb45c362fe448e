package view

import (
	"errors"
	"fmt"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zklock/zklock/internal/owner"
	"github.com/zklock/zklock/internal/recipe"
)

// Describe says who a contender is, in one line, as well as its data tells.
func Describe(c recipe.Contender, d owner.NodeData) string {
	s := Who(c, d)
	if since := d.Owner.HeldSince(); d.ByZklock && !since.IsZero() {
		s += " since " + since.Local().Format(time.RFC3339)
	}
	return s
}

// Who says who a contender is, without when it came: user@host, pid and
// command for zklock's nodes, the client's data and the node otherwise.
// Another client's data may be as long as the server allows (1 MB), so
// what it says is cut short (CutLong) wherever it is shown.
func Who(c recipe.Contender, d owner.NodeData) string { return CutLong(who(c, d)) }

func who(c recipe.Contender, d owner.NodeData) string {
	if d.ByZklock {
		o := d.Owner
		s := fmt.Sprintf("%s pid %d", o.Host, o.PID)
		if o.User != "" {
			s = o.User + "@" + s
		}
		if len(o.Cmd) > 0 {
			s += fmt.Sprintf(" (%s)", o.CommandLine())
		}
		return s
	}
	if d.Raw != "" {
		return fmt.Sprintf("%s client %q (node %s)", c.Flavor, d.Raw, c.Name)
	}
	return fmt.Sprintf("%s client (node %s)", c.Flavor, c.Name)
}

// DescribeEntry is Describe for an entry of a queue.
func DescribeEntry(e recipe.Entry) string { return Describe(e.Contender, owner.Decode(e.Data)) }

// Busy says that a lock is busy and who holds it. A holder whose data
// could not be read is named by its node alone: its flavor comes from the
// node's name, which zklock's own nodes share with Curator's, so calling
// it a Curator client would be a guess, and often a wrong one.
func Busy(e *recipe.BusyError) string {
	who := Describe(e.Holder, owner.Decode(e.Data))
	switch {
	case errors.Is(e.Unread, zk.ErrNoNode):
		who = fmt.Sprintf("node %s, which left as it was read: the lock is changing hands fast", CutLong(e.Holder.Name))
	case e.Unread != nil:
		who = fmt.Sprintf("node %s (its data could not be read: %v)", CutLong(e.Holder.Name), e.Unread)
	}
	switch p := e.Pool; {
	case p != nil && p.Queued:
		return fmt.Sprintf("pool %s is busy: %s is ahead in its queue", p.Path, who)
	case p != nil:
		return fmt.Sprintf("pool %s is busy: %d of its %d members free, %d needed; %s is held by %s", p.Path, p.Free, p.Size, p.Take, e.Path, who)
	case e.Limit > 0:
		return fmt.Sprintf("%s is busy: all %d leases are taken, the first by %s", e.Path, e.Limit, who)
	}
	return fmt.Sprintf("%s is busy: held by %s", e.Path, who)
}

// HeldBy says who holds path, given its holders: "path held by X" or
// "path held by X and N more"; "" if there are none.
func HeldBy(path string, holders []recipe.Entry) string {
	if len(holders) == 0 {
		return ""
	}
	s := fmt.Sprintf("%s held by %s", path, DescribeEntry(holders[0]))
	if len(holders) > 1 {
		s += fmt.Sprintf(" and %d more", len(holders)-1)
	}
	return s
}
