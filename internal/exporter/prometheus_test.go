package exporter

import (
	"strconv"
	"testing"
	"time"

	"github.com/zklock/zklock/internal/owner"
	"github.com/zklock/zklock/internal/testkit/zktest"
	"github.com/zklock/zklock/internal/testkit/zktest/shared"
)

// TestPrometheusScrapes: a real Prometheus scraping the exporter sees a
// running holder's hold time rise and a queue of 50 waiters, through its
// HTTP API.
func TestPrometheusScrapes(t *testing.T) {
	conn := shared.Raw(t)
	root := shared.Dir(t)
	lockPath := root + "/deploy"
	mkdirs(t, conn, lockPath)
	// The holder is a node as a zklock holding the lock writes it; the
	// waiters are bare nodes behind it, on the same session: a queue
	// costs the test no process per waiter.
	join(t, conn, lockPath, owner.Owner{Zklock: "test", Host: "web-1", PID: 1, Cmd: []string{"deploy"}, Acquired: time.Now()}.Encode())
	const waiters = 50
	for range waiters {
		join(t, conn, lockPath, nil)
	}
	addr := startExporter(t, shared.Server(t).ConnectString(), root)
	prom := zktest.StartPrometheus(t, t.TempDir(), addr, time.Second)

	ctx := shared.Ctx(t, 2*time.Minute)
	// value waits for query's one series to satisfy cond.
	value := func(what, query string, cond func(float64) bool) float64 {
		t.Helper()
		var last map[string]float64
		var err error
		for ctx.Err() == nil {
			last, err = prom.Query(ctx, query)
			if err == nil && len(last) == 1 {
				for _, v := range last {
					if cond(v) {
						return v
					}
				}
			}
			time.Sleep(100 * time.Millisecond)
		}
		t.Fatalf("Prometheus never showed %s: %s gave %v (%v)", what, query, last, err)
		return 0
	}
	sel := `{path="` + lockPath + `"}`
	value("50 waiters", "zklock_lock_waiters"+sel, func(v float64) bool { return v == waiters })
	value("the holder", "zklock_lock_holders"+sel, func(v float64) bool { return v == 1 })
	value("the exporter up", `zklock_exporter_up`, func(v float64) bool { return v == 1 })
	first := value("a hold time", "zklock_lock_oldest_hold_seconds"+sel, func(v float64) bool { return v > 0 })
	later := value("the hold time rise", "zklock_lock_oldest_hold_seconds"+sel, func(v float64) bool { return v > first })
	t.Logf("hold time read %s, then %s", strconv.FormatFloat(first, 'f', 3, 64), strconv.FormatFloat(later, 'f', 3, 64))
}
