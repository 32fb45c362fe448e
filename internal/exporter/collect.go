package exporter

import (
	"path"
	"strconv"
	"time"

	"github.com/zklock/zklock/internal/follow"
	"github.com/zklock/zklock/internal/owner"
	"github.com/zklock/zklock/internal/recipe"
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
	snap   follow.Snapshot
	read   bool      // snap holds a tree read from the servers
	lastOK time.Time // the last snapshot shown while connected
	state  string
}

// families renders st as the series of one scrape at now.
func families(st state, now time.Time, maxPaths int) []*family {
	up := gauge("zklock_exporter_up", "1 while the exporter has a session and the lock tree it serves is current, else 0.")
	session := gauge("zklock_exporter_session_state", "The exporter's ZooKeeper session: 1 for the state it is in.")
	readAt := gauge("zklock_exporter_tree_read_timestamp_seconds", "When the exporter last read the lock tree while connected; its watches keep it current since.")
	changedAt := gauge("zklock_exporter_tree_changed_timestamp_seconds", "When the lock tree's content last changed, as the exporter saw it.")
	paths := gauge("zklock_exporter_lock_paths", "Lock paths below --path, exported or not.")
	dropped := gauge("zklock_exporter_lock_paths_dropped", "Lock paths not exported, beyond --max-paths.")
	contenders := gauge("zklock_exporter_contenders", "Contender nodes below --path: holders and waiters of every lock path.")
	skipped := gauge("zklock_exporter_skipped_paths", "Nodes below --path that the exporter may not read (their ACL).")

	holders := gauge("zklock_lock_holders", "Contenders that hold the lock.")
	waiters := gauge("zklock_lock_waiters", "Contenders waiting for the lock.")
	held := gauge("zklock_lock_oldest_hold_seconds", "How long the longest holder has held the lock; 0 when none holds it.")
	waited := gauge("zklock_lock_oldest_wait_seconds", "How long the longest waiter has waited; 0 when none waits.")
	info := gauge("zklock_lock_holder_info", "1 for each holder: its host, pid, command's name and node flavor, as its node says.")

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

// gauge is a family of gauges; every series of the exporter is one, a
// state read now.
func gauge(name, help string) *family { return &family{name: name, help: help, typ: "gauge"} }

// heldSince is when e took the lock: as its zklock wrote it, or else its
// node's creation (the server's clock), which is no later.
func heldSince(e recipe.Entry) time.Time {
	if d := owner.Decode(e.Data); d.ByZklock && !d.Owner.Acquired.IsZero() {
		return d.Owner.Acquired
	}
	return e.Created
}

// who is a holder's host, pid and command's name, as label values. A node
// written by another client (Curator's IP address, Kazoo's identifier) is
// its host; one this exporter may not read says nothing.
func who(e recipe.Entry) (host, pid, cmd string) {
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
