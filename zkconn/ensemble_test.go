package zkconn

import (
	"context"
	"testing"

	"github.com/zklock/zklock/internal/testkit/zktest"
)

// followerOf returns the leader of e and one of its followers.
func followerOf(t *testing.T, ctx context.Context, e *zktest.Cluster) (leader, follower *zktest.Server) {
	t.Helper()
	leader, err := e.Leader(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range e.Servers() {
		if s != leader {
			return leader, s
		}
	}
	t.Fatal("an ensemble of one")
	return nil, nil
}
