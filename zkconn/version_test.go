package zkconn

import (
	"os"
	"regexp"
	"testing"
)

// pinnedGoZookeeper is the go-zookeeper version whose internals zkconn was
// written against (docs/architecture.md, "How zkconn depends on
// go-zookeeper's internals").
const pinnedGoZookeeper = "v1.0.4"

// TestGoZookeeperVersion fails loudly when the library moves: wire.go,
// raw.go, multiread.go and the rest read frames and call a function the
// library does not promise to keep, so a new version needs a review of
// each of them, not only a green build. A test binary carries no module
// list, so go.mod is read.
func TestGoZookeeperVersion(t *testing.T) {
	b, err := os.ReadFile("../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	req := regexp.MustCompile(`(?m)^\s*(?:require\s+)?github\.com/go-zookeeper/zk\s+(\S+)`).FindSubmatch(b)
	if req == nil {
		t.Fatal("go.mod does not require github.com/go-zookeeper/zk")
	}
	replaced := regexp.MustCompile(`(?m)^\s*(?:replace\s+)?github\.com/go-zookeeper/zk(\s+\S+)?\s+=>`).Match(b)
	if v := string(req[1]); v != pinnedGoZookeeper || replaced {
		t.Fatalf("go.mod has go-zookeeper %s (replaced: %v), but zkconn reads its frames and calls its internals as of %s: "+
			"review each row of docs/architecture.md's \"How zkconn depends on go-zookeeper's internals\" "+
			"against the library's changes, run the full suite, then update pinnedGoZookeeper", v, replaced, pinnedGoZookeeper)
	}
}
