package runner

import (
	"context"
	"sync"
	"time"
)

// waitClock is --timeout. Its clock starts once zklock has a session and
// joins the queue, not before connecting, and it ends only a wait: a lock
// that is free when zklock looks is taken whatever the timeout, because the
// timeout cancels the acquisition only after the lock package has said that
// it must wait (OnWait). One clock covers every path and every rejoin after
// a lost place, so --timeout bounds the whole wait.
type waitClock struct {
	mu      sync.Mutex
	waiting bool // the lock package has started to wait at least once
	expired bool // the timeout has passed
	cancel  context.CancelCauseFunc
	timer   *time.Timer
}

// startWaitClock returns a context that ends with ErrWaitTimeout once
// timeout has passed and zklock has had to wait. The caller must call stop.
func startWaitClock(ctx context.Context, timeout time.Duration) (context.Context, *waitClock) {
	wctx, cancel := context.WithCancelCause(ctx)
	w := &waitClock{cancel: cancel}
	w.timer = time.AfterFunc(timeout, func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		w.expired = true
		if w.waiting {
			w.cancel(ErrWaitTimeout)
		}
	})
	return wctx, w
}

// onWait is called each time the lock package starts to wait.
func (w *waitClock) onWait() {
	if w == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.waiting = true
	if w.expired {
		w.cancel(ErrWaitTimeout)
	}
}

func (w *waitClock) stop() {
	if w == nil {
		return
	}
	w.timer.Stop()
	w.cancel(nil)
}
