package lock

import (
	"context"
	"errors"
	"fmt"
	"time"
)

var (
	// ErrNoContact means the server has not been heard from for so long
	// that the session could expire before a command could be stopped.
	ErrNoContact = errors.New("no contact with ZooKeeper")
	// ErrNodeGone means our lock node was deleted while we held the lock
	// (by an operator, or because the session ended).
	ErrNodeGone = errors.New("lock node deleted")
)

// Guard watches a held lock and reports, once, on the returned channel when
// it must be treated as lost:
//
//   - the session expired, or go-zookeeper replaced it with a new one;
//   - our node is gone (checked every checkEvery with a plain exists, so no
//     watch is added to the queue's watch table);
//   - the server has not been heard from for deadline, counted from the
//     client's LastHeard: the send time of the last request that got a
//     reply. The caller picks deadline so that the command can be stopped
//     before the server could expire the session (see runner.Budget).
//
// The goroutine behind it ends when ctx is done; the channel is never
// closed, so a caller selecting on it after ctx ends just never fires.
func (l *Lease) Guard(ctx context.Context, deadline, checkEvery time.Duration) <-chan error {
	out := make(chan error, 1)
	go func() {
		report := func(err error) {
			out <- err
		}
		timer := time.NewTimer(time.Until(l.c.LastHeard().Add(deadline)))
		defer timer.Stop()
		ticker := time.NewTicker(checkEvery)
		defer ticker.Stop()
		checked := make(chan error, 1)
		inFlight := false
		for {
			select {
			case <-ctx.Done():
				return
			case <-l.c.Lost():
				report(l.c.LostErr())
				return
			case <-timer.C:
				last := l.c.LastHeard()
				if wait := time.Until(last.Add(deadline)); wait > 0 {
					timer.Reset(wait)
					continue
				}
				report(fmt.Errorf("%w for %s (session timeout %s): the session may expire before the command could be stopped",
					ErrNoContact, time.Since(last).Round(10*time.Millisecond), l.c.NegotiatedTimeout()))
				return
			case <-ticker.C:
				// One check at a time: while disconnected the request
				// waits for the connection, and the timer above is what
				// decides.
				if !inFlight {
					inFlight = true
					go func() {
						ok, _, err := l.c.Exists(ctx, l.Node)
						if err == nil && !ok {
							err = fmt.Errorf("%w: %s", ErrNodeGone, l.Node)
						} else {
							err = nil
						}
						checked <- err
					}()
				}
			case err := <-checked:
				inFlight = false
				if err != nil {
					report(err)
					return
				}
			}
		}
	}()
	return out
}
