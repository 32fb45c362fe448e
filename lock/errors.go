package lock

import (
	"errors"
	"fmt"
	"time"

	"github.com/zklock/zklock/internal/recipe"
	"github.com/zklock/zklock/zkconn"
)

// The sentinels. Each typed error below is its sentinel for errors.Is.
var (
	// ErrBadRequest: a Request that cannot be taken as it is, such as a
	// semaphore of no leases. A bad path is zkconn.ErrBadPath.
	ErrBadRequest = errors.New("bad lock request")
	// ErrBusy: a NoWait request found the lock held (*BusyError).
	ErrBusy = errors.New("lock busy")
	// ErrWaitTimeout: a WaitUntil deadline passed before the lock was held.
	ErrWaitTimeout = errors.New("timed out waiting for the lock")
	// ErrRevoked: a contender was asked to give up its place (*RevokedError).
	ErrRevoked = errors.New("lock revoked")
	// ErrNodeGone: a lease's node was deleted while its session lived.
	ErrNodeGone = errors.New("lock node deleted")
	// ErrReleased is a lease's Err once it was released, by Release or by
	// closing its session.
	ErrReleased = errors.New("lease released")
	// ErrKindConflict: the path holds the other kind of queue (*KindConflictError).
	ErrKindConflict = errors.New("lock kind conflict")
	// ErrFlavorConflict: another library's contenders could not see ours
	// (*FlavorConflictError).
	ErrFlavorConflict = errors.New("lock flavor conflict")
	// ErrLimitMismatch: a semaphore's holders disagree on its limit
	// (*LimitMismatchError).
	ErrLimitMismatch = errors.New("semaphore limit mismatch")
	// ErrHandoffChurn: Revoke's holders kept leaving before it could ask them.
	ErrHandoffChurn = errors.New("the lock kept changing hands")
)

// BusyError is a NoWait request's answer when someone else holds the lock.
type BusyError struct {
	Path   string
	Holder string // the holder's node
	Data   []byte // what the holder's node says of it; empty if it had left
	Limit  int    // for a semaphore: how many leases there are, all taken
	err    error
}

func (e *BusyError) Error() string {
	return text(e.err, "%s is busy: held by node %s", e.Path, e.Holder)
}
func (e *BusyError) Is(target error) bool { return target == ErrBusy }
func (e *BusyError) Unwrap() error        { return e.err }

// Revocation is a request that a contender give up its place. The zero
// Revocation is none.
type Revocation struct {
	By string    // who asked, as "user@host pid N" when zklock's record says, else ""
	At time.Time // when, on the server's clock
}

// RevokedError means a contender of ours was asked to give up its place:
// Lease.Revoked delivers it to a holder, Acquire returns it to a waiter.
type RevokedError struct {
	Path, Node string
	Revocation
	err error
}

func (e *RevokedError) Error() string {
	return text(e.err, "%s: node %s asked to give up its place", e.Path, e.Node)
}
func (e *RevokedError) Is(target error) bool { return target == ErrRevoked }
func (e *RevokedError) Unwrap() error        { return e.err }

// KindConflictError means the lock path holds contenders of the other kind
// of queue (a semaphore's where a lock was asked for, or the reverse),
// which would not exclude ours. Acquire has backed out of the queue.
type KindConflictError struct {
	Path string
	Node string // one node of the other kind
	// Semaphore: the path holds a semaphore; else it holds a lock.
	Semaphore bool
	err       error
}

func (e *KindConflictError) Error() string {
	return text(e.err, "%s holds another kind of queue (node %s)", e.Path, e.Node)
}
func (e *KindConflictError) Is(target error) bool { return target == ErrKindConflict }
func (e *KindConflictError) Unwrap() error        { return e.err }

// FlavorConflictError means another library's contenders on the path
// cannot see nodes named with the requested Flavor, so they would not be
// excluded. Acquire has backed out of the queue.
type FlavorConflictError struct {
	Path  string
	Node  string // the other library's contender, its full path
	Other string // that library, e.g. "a Kazoo Lock/ReadLock/WriteLock"
	err   error
}

func (e *FlavorConflictError) Error() string {
	return text(e.err, "%s is used by %s (node %s), which cannot see the requested nodes", e.Path, e.Other, e.Node)
}
func (e *FlavorConflictError) Is(target error) bool { return target == ErrFlavorConflict }
func (e *FlavorConflictError) Unwrap() error        { return e.err }

// LimitMismatchError is a semaphore held by a holder that declared
// another limit than this request's.
type LimitMismatchError struct {
	Path   string
	Holder string // the holder's lease node
	Held   int    // the limit the holder declared
	Want   int    // this request's limit
	err    error
}

func (e *LimitMismatchError) Error() string {
	return text(e.err, "%s is held with a limit of %d by node %s; this request has a limit of %d", e.Path, e.Held, e.Holder, e.Want)
}
func (e *LimitMismatchError) Is(target error) bool { return target == ErrLimitMismatch }
func (e *LimitMismatchError) Unwrap() error        { return e.err }

// text is err's message, the recipes' own, or, for an error a caller
// built, one made of its fields.
func text(err error, format string, args ...any) string {
	if err != nil {
		return err.Error()
	}
	return fmt.Sprintf(format, args...)
}

// sentinel carries an error of the recipes as one of this package's
// sentinels: the message stays the recipe's, errors.Is finds both.
type sentinel struct {
	public error
	err    error
}

func (e *sentinel) Error() string        { return e.err.Error() }
func (e *sentinel) Is(target error) bool { return target == e.public }
func (e *sentinel) Unwrap() error        { return e.err }

// sentinels pairs the recipes' sentinels with this package's, for the
// errors that have no type of their own here.
var sentinels = []struct{ in, out error }{
	{recipe.ErrWaitTimeout, ErrWaitTimeout},
	{recipe.ErrNodeGone, ErrNodeGone},
	{recipe.ErrReleased, ErrReleased},
	{recipe.ErrHandoffChurn, ErrHandoffChurn},
	{recipe.ErrRevoked, ErrRevoked},
}

// public turns an error of internal/recipe into this package's: its
// types are the API, the recipes' are not. The original stays in the
// chain (Unwrap), so that zkconn's errors are still found there.
func public(err error) error {
	if err == nil {
		return nil
	}
	var (
		busy  *recipe.BusyError
		rev   *recipe.RevokedError
		kind  *recipe.KindConflictError
		flav  *recipe.FlavorConflictError
		limit *recipe.LimitMismatchError
	)
	switch {
	case errors.As(err, &busy):
		return &BusyError{Path: busy.Path, Holder: busyHolder(busy), Data: busy.Data, Limit: busy.Limit, err: err}
	case errors.As(err, &rev):
		return revoked(rev, err)
	case errors.As(err, &kind):
		return &KindConflictError{Path: kind.Path, Node: kind.Node, Semaphore: kind.Found == recipe.RecipeSemaphore, err: err}
	case errors.As(err, &flav):
		return &FlavorConflictError{Path: flav.Path, Node: zkconn.Join(flav.Path, flav.Node), Other: flav.Other, err: err}
	case errors.As(err, &limit):
		return &LimitMismatchError{Path: limit.Path, Holder: zkconn.Join(limit.Path, recipe.SemaphoreLeasesName, limit.Holder.Name), Held: limit.Held, Want: limit.Want, err: err}
	}
	for _, s := range sentinels {
		if errors.Is(err, s.in) {
			return &sentinel{public: s.out, err: err}
		}
	}
	return err
}

func revoked(r *recipe.RevokedError, err error) *RevokedError {
	return &RevokedError{Path: r.Path, Node: r.Node, Revocation: revocation(r.Revocation), err: err}
}

func revocation(r recipe.Revocation) Revocation {
	if !r.Pending() {
		return Revocation{}
	}
	if r.Host == "" {
		return Revocation{At: r.At}
	}
	return Revocation{By: r.By(), At: r.At}
}

// busyHolder is the full path of the holder's node a try found, or "" if
// it found none to name.
func busyHolder(e *recipe.BusyError) string {
	switch {
	case e.Holder.Name == "":
		return ""
	case e.Limit > 0:
		return zkconn.Join(e.Path, recipe.SemaphoreLeasesName, e.Holder.Name)
	}
	return zkconn.Join(e.Path, e.Holder.Name)
}
