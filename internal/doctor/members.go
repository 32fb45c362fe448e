package doctor

import (
	"context"
	"fmt"
	"strings"

	"github.com/zklock/zklock/zkconn"
)

// Warning is a check's finding that deserves attention but does not fail
// the check: zklock works as it is, and would not after a change to come.
type Warning struct{ Text string }

func (w *Warning) Error() string { return w.Text }

// membersCheck compares the connect string with the ensemble's membership
// in /zookeeper/config. A running zklock follows the membership
// (zkconn/follow.go), but a new one starts from its connect string: once
// every address it names has left the ensemble, it cannot connect at all.
// So an address that is not a member, and a member the string lacks,
// are said while there is time to fix the configuration. ok is false when
// there is nothing to compare: a standalone server, a server before 3.5,
// or a configuration that names no client addresses.
func membersCheck(ctx context.Context, c *zkconn.Client, conn zkconn.Options) (check Check, ok bool) {
	m, _, err := c.Membership(ctx)
	if err != nil {
		return Check{Subject: "members", Err: err}, true
	}
	if len(m.Members) == 0 {
		return Check{}, false
	}
	servers := conn.ConnString.Servers
	cmp := zkconn.CompareMembers(ctx, servers, m.Members, conn.TLS != nil)
	version := ""
	if m.Version != "" {
		version = " (configuration " + m.Version + ")"
	}
	if len(cmp.Strangers) == 0 && len(cmp.Missing) == 0 {
		return Check{Subject: "members", Detail: fmt.Sprintf("the connect string names all %d members%s", len(m.Members), version)}, true
	}
	var says []string
	if len(cmp.Strangers) > 0 {
		says = append(says, fmt.Sprintf("not a member%s: %s", version, strings.Join(cmp.Strangers, ", ")))
	}
	if len(cmp.Missing) > 0 {
		var names []string
		for _, mem := range cmp.Missing {
			role := ""
			if mem.Observer {
				role = ", observer"
			}
			names = append(names, fmt.Sprintf("server.%d at %s%s", mem.ID, mem.Addr, role))
		}
		says = append(says, "members missing from the connect string: "+strings.Join(names, ", "))
	}
	line := zkconn.ConnString{Servers: cmp.Followed, Chroot: conn.ConnString.Chroot}.String()
	says = append(says, fmt.Sprintf("in the config file: servers = %q", line))
	return Check{Subject: "members", Err: &Warning{Text: strings.Join(says, "; ")}}, true
}
