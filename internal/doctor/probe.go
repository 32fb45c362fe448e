package doctor

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zklock/zklock/zkconn"
)

// probeData is what a probe node holds, for anyone who lists it during its
// few milliseconds of life.
var probeData = []byte("zklock doctor: a check that this client may create, read and delete here; deleted at once")

// probeCleanupTimeout bounds deleting the probe's node after a failure
// halfway, when the caller's context may be done.
const probeCleanupTimeout = 5 * time.Second

// ProbeResult says what Probe did at a lock path.
type ProbeResult struct {
	// Node is the child it created, read back and deleted.
	Node string
	// Made are the nodes on the way to the lock path (the path included)
	// that did not exist: Probe created them and deleted them again.
	Made []string
	// Reconnects counts the requests sent again after the connection was
	// lost and the session came back (a member went down, a leader was
	// elected).
	Reconnects int
}

// maxReconnects bounds how many lost connections one probe rides out: an
// election costs one or two; more is an ensemble that does not hold.
const maxReconnects = 3

// again reports whether a request that failed with err is to be sent
// again: the connection was lost, and the session came back within its
// own life. A run rides out an election the same way, so a check that
// failed only for one would report a problem run does not have.
func again(ctx context.Context, c *zkconn.Client, err error, reconnects *int) bool {
	if !zkconn.IsConnectionLoss(err) || *reconnects >= maxReconnects {
		return false
	}
	wctx, cancel := context.WithTimeout(ctx, c.Contact().Timeout)
	defer cancel()
	if c.WaitSession(wctx) != nil {
		return false
	}
	*reconnects++
	return true
}

// probeName is a child name no lock recipe counts as a contender: it ends
// in no sequence number (zklock's and Kazoo's parsers want one) and holds
// neither "lock-" nor "__lock__" (the markers Curator and Kazoo sort by).
func probeName() string {
	b := make([]byte, 8)
	rand.Read(b)
	return "zklock.probe." + hex.EncodeToString(b) + ".tmp"
}

// Probe checks that this client may do at path what a contender does:
// create the path if it is missing, create an ephemeral child, read it and
// delete it. It leaves nothing behind: the child is deleted, and so are the
// nodes it created on the way (even a persistent one, with Protect), unless
// a contender has meanwhile queued under them. The error is the first
// request the server refused, as a *zkconn.OpError.
func Probe(ctx context.Context, c *zkconn.Client, path string) (res ProbeResult, err error) {
	node := zkconn.Join(path, probeName())
	created := false
	defer func() {
		// On a failure halfway (a lost connection, a refused read) the
		// ephemeral child may exist: delete it now rather than at the
		// session's end, then the nodes made for it.
		if err != nil && created {
			ctx, cancel := context.WithTimeout(context.Background(), probeCleanupTimeout)
			defer cancel()
			if derr := c.Delete(ctx, node); derr != nil && !errors.Is(derr, zk.ErrNoNode) {
				err = errors.Join(err, derr)
			}
		}
		c.RemoveEmpty(res.Made)
	}()
	for attempt := 1; ; attempt++ {
		_, err = c.Create(ctx, node, probeData, zk.FlagEphemeral)
		if zkconn.IsConnectionLoss(err) {
			created = true // perhaps: the reply was lost, not the request
			if again(ctx, c, err, &res.Reconnects) {
				continue
			}
		}
		if errors.Is(err, zk.ErrNodeExists) && created {
			// The create that lost its reply did happen: the name is
			// this probe's alone.
			err = nil
		}
		if err == nil || !errors.Is(err, zk.ErrNoNode) || attempt >= zkconn.MaxCreateAttempts {
			break
		}
		err = c.EnsurePath(ctx, path, &res.Made)
		for again(ctx, c, err, &res.Reconnects) {
			err = c.EnsurePath(ctx, path, &res.Made)
		}
		if err != nil && !errors.Is(err, zk.ErrNoNode) {
			return res, err
		}
	}
	switch {
	case errors.Is(err, zk.ErrNoChildrenForEphemerals):
		return res, fmt.Errorf("%w: %s cannot hold a lock queue", zkconn.ErrEphemeralParent, path)
	case err != nil:
		return res, err
	}
	created = true
	res.Node = node
	data, _, err := c.Get(ctx, node)
	for again(ctx, c, err, &res.Reconnects) {
		data, _, err = c.Get(ctx, node)
	}
	if err != nil {
		return res, err
	}
	if !bytes.Equal(data, probeData) {
		return res, fmt.Errorf("read %s: got %d bytes that are not what was written", node, len(data))
	}
	err = c.Delete(ctx, node)
	for again(ctx, c, err, &res.Reconnects) {
		if err = c.Delete(ctx, node); errors.Is(err, zk.ErrNoNode) {
			err = nil // the delete that lost its reply did happen
		}
	}
	if err != nil {
		return res, err
	}
	created = false
	return res, nil
}
