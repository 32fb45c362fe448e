package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/zklock/zklock/internal/testkit/zktest"
)

// ownEnsemble starts a 3-server ensemble for one test that changes it
// beyond what the shared one may see (restarts with another
// configuration, restored data, a dead leader). It is stopped when the
// test ends; ctx bounds the test.
func ownEnsemble(t *testing.T, opts zktest.Options) (context.Context, *zktest.Cluster) {
	t.Helper()
	return zktest.OwnEnsemble(t, 3*time.Minute, opts)
}

// proxied puts a fault proxy in front of every server of c, and returns
// them, in c's order, with the connect string through them.
func proxied(t *testing.T, c *zktest.Cluster) ([]*zktest.Proxy, string) {
	t.Helper()
	var proxies []*zktest.Proxy
	var through []string
	for _, addr := range c.Addrs() {
		p := zktest.NewProxyT(t, addr)
		proxies = append(proxies, p)
		through = append(through, p.Addr())
	}
	return proxies, strings.Join(through, ",")
}
