package zktest

import (
	"context"
	"time"
)

// OwnEnsemble starts a 3-server ensemble with opts for one test that
// changes it beyond what a shared server may see (stops, restarts,
// partitions, restored data). ctx bounds the test's work with it, within
// the time given; the ensemble is stopped when the test ends. Under -short
// the test is skipped.
func OwnEnsemble(tb TB, within time.Duration, opts Options) (context.Context, *Cluster) {
	tb.Helper()
	NeedServer(tb)
	ctx, cancel := context.WithTimeout(context.Background(), within)
	tb.Cleanup(cancel)
	c, err := StartEnsemble(ctx, 3, opts)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { c.Stop() })
	return ctx, c
}
