package exporter

import (
	"path"
	"strconv"
	"time"

	"github.com/zklock/zklock/internal/owner"
	"github.com/zklock/zklock/internal/watch"
	"github.com/zklock/zklock/lock"
)

// maxHoldersPerPath caps the holder info series of one lock path: a
// semaphore of a thousand leases is a thousand holders, and its count is
// in zklock_lock_holders already.
const maxHoldersPerPath = 16

// Session states, as zklock_exporter_session_state labels them.
const (
	stateConnecting   = "connecting"   // no session yet, or a new one sought after an error
	stateConnected    = "connected"    // a session, and the tree read on it
	stateDisconnected = "disconnected" // the connection dropped or the session expired; the last tree is served
)

var states = []string{stateConnecting, stateConnected, stateDisconnected}

// state is what a scrape reports: the watch's last snapshot and how the
// session stands.
type state struct {
	snap   watch.Snapshot
	read   bool      // snap holds a tree read from the servers
	lastOK time.Time // the last snapshot shown while connected
	state  string
}

// families renders st as the series of one scrape at now.
func families(st state, now time.Time, maxPaths int) []*family {
	up := &family{name: "zklock_exporter_up", typ: "gauge",
		help: "1 while the exporter has a session and the lock tree it serves is current, else 0."}
	session := &family{name: "zklock_exporter_session_state", typ: "gauge",
		help: "The exporter's ZooKeeper session: 1 for the state it is in."}
	readAt := &family{name: "zklock_exporter_tree_read_timestamp_seconds", typ: "gauge",
		help: "When the exporter last read the lock tree while connected; its watches keep it current since."}
	changedAt := &family{name: "zklock_exporter_tree_changed_timestamp_seconds", typ: "gauge",
		help: "When the lock tree's content last changed, as the exporter saw it."}
	paths := &family{name: "zklock_exporter_lock_paths", typ: "gauge",
		help: "Lock paths below --path, exported or not."}
	dropped := &family{name: "zklock_exporter_lock_paths_dropped", typ: "gauge",
		help: "Lock paths not exported, beyond --max-paths."}
	contenders := &family{name: "zklock_exporter_contenders", typ: "gauge",
		help: "Contender nodes below --path: holders and waiters of every lock path."}
	skipped := &family{name: "zklock_exporter_skipped_paths", typ: "gauge",
		help: "Nodes below --path that the exporter may not read (their ACL)."}

	holders := &family{name: "zklock_lock_holders", typ: "gauge", help: "Contenders that hold the lock."}
	waiters := &family{name: "zklock_lock_waiters", typ: "gauge", help: "Contenders waiting for the lock."}
	held := &family{name: "zklock_lock_oldest_hold_seconds", typ: "gauge",
		help: "How long the longest holder has held the lock; 0 when none holds it."}
	waited := &family{name: "zklock_lock_oldest_wait_seconds", typ: "gauge",
		help: "How long the longest waiter has waited; 0 when none waits."}
	info := &family{name: "zklock_lock_holder_info", typ: "gauge",
		help: "1 for each holder: its host, pid, command's name and node flavor, as its node says."}

	isUp := 0.0
	if st.read && st.state == stateConnected {
		isUp = 1
	}
	up.add(isUp)
	for _, s := range states {
		v := 0.0
		if s == st.state {
			v = 1
		}
		session.add(v, "state", s)
	}
	if !st.lastOK.IsZero() {
		readAt.add(seconds(st.lastOK))
	}
	if !st.read {
		return []*family{up, session}
	}
	changedAt.add(seconds(st.snap.Changed))
	qs := st.snap.Tree.Queues
	paths.add(float64(len(qs)))
	n := 0
	for _, q := range qs {
		n += len(q.Entries)
	}
	contenders.add(float64(n))
	skipped.add(float64(len(st.snap.Tree.Skipped)))
	kept := qs
	if len(kept) > maxPaths {
		kept = kept[:maxPaths]
	}
	dropped.add(float64(len(qs) - len(kept)))
	for _, q := range kept {
		p := labelValue(q.Path)
		var nh, nw int
		var oldestHold, oldestWait float64
		for _, e := range q.Entries {
			if e.Holding {
				nh++
				oldestHold = max(oldestHold, since(heldSince(e), now))
				if nh <= maxHoldersPerPath {
					host, pid, cmd := who(e)
					info.add(1, "path", p, "host", host, "pid", pid, "command", cmd, "flavor", labelValue(string(e.Flavor)))
				}
			} else {
				nw++
				oldestWait = max(oldestWait, since(e.Created, now))
			}
		}
		holders.add(float64(nh), "path", p)
		waiters.add(float64(nw), "path", p)
		held.add(oldestHold, "path", p)
		waited.add(oldestWait, "path", p)
	}
	sortSamples(info)
	return []*family{up, session, readAt, changedAt, paths, dropped, contenders, skipped,
		holders, waiters, held, waited, info}
}

// heldSince is when e took the lock: as its zklock wrote it, or else its
// node's creation (the server's clock), which is no later.
func heldSince(e lock.Entry) time.Time {
	if d := owner.Decode(e.Data); d.ByZklock && !d.Owner.Acquired.IsZero() {
		return d.Owner.Acquired
	}
	return e.Created
}

// who is a holder's host, pid and command's name, as label values. A node
// written by another client (Curator's IP address, Kazoo's identifier) is
// its host; one this exporter may not read says nothing.
func who(e lock.Entry) (host, pid, cmd string) {
	if e.Unreadable {
		return "", "", ""
	}
	d := owner.Decode(e.Data)
	if !d.ByZklock {
		return labelValue(d.Raw), "", ""
	}
	if d.Owner.PID > 0 {
		pid = strconv.Itoa(d.Owner.PID)
	}
	if argv := d.Owner.Argv(); len(argv) > 0 && argv[0] != "" {
		cmd = labelValue(path.Base(argv[0]))
	}
	return labelValue(d.Owner.Host), pid, cmd
}

// since is the seconds from t to now; never negative, as two hosts'
// clocks may disagree.
func since(t, now time.Time) float64 {
	if t.IsZero() || !now.After(t) {
		return 0
	}
	return now.Sub(t).Seconds()
}

func seconds(t time.Time) float64 { return float64(t.UnixMilli()) / 1000 }
