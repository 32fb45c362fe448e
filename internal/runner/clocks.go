package runner

import (
	"fmt"
	"time"

	"github.com/zklock/zklock/internal/success"
	"github.com/zklock/zklock/lock"
)

// How old is a success record? --once-per must answer without trusting
// one host's clock against another's, and the ensemble's clock is not one
// clock either:
//
//   - A znode's mtime is the wall clock of the server that led when the
//     write was proposed, and the high 32 bits of its zxid are that
//     leader's epoch. Every election starts a new epoch. So the record's
//     date and a stamp written now (lock.ServerTime) that share an epoch
//     were read off one clock, and their difference is the record's age,
//     whatever that clock's offset: the rule trusts it alone.
//   - Of different epochs, the two dates may come from two servers whose
//     clocks disagree, by any amount: a success dated by a leader 2h slow
//     looks 2h older to its successor. zklock writes its host's wall clock
//     into the record (Owner.Written), so a second age is known: this
//     host's clock now minus the writer's then. It is exact on the host
//     that wrote the record and, across hosts, off by their skew (NTP keeps
//     that to milliseconds). When the two ages agree within
//     clockTolerance, the server's is used; when they do not, one of the
//     clock pairs is wrong and zklock cannot tell which: it takes the
//     younger age. A run skipped in doubt costs one run and is said
//     (forget allows the next one); a run made twice cannot be undone.
//   - Epoch 0 is a standalone server's, and it stays 0 when that server
//     restarts, perhaps with its clock set since (a wrong clock fixed, a
//     host restored): there, one epoch is not one clock, and the record
//     is judged as if the epochs differed.
//   - A record dated after the stamp (a negative age) is "from the
//     future": a leader's clock was set back, or a later leader's clock
//     runs behind an earlier one's. It is within any window, and said.
//   - A record without the writer's clock (another client's, or an older
//     zklock's) has the server's age alone.
//
// Either way the doubtful decision is the one for "at most once", and it
// ends by itself: once both ages have passed the window, the job runs and
// records a success under the current leader.

// standaloneEpoch is the epoch of every write to a standalone server.
const standaloneEpoch = 0

// clockTolerance is how far the server's and the hosts' ages of a record
// may differ before the clocks are said to disagree: the hosts' skew under
// NTP is milliseconds, and the rest allows for the time the record's write
// and the stamp's write each took to reach the leader (the host's clock is
// read before a write is sent). Servers whose clocks differ by less go
// unnoticed, and can shorten or lengthen a window by that much.
const clockTolerance = 5 * time.Second

// ClockDoubt says why a success record's age is in doubt: the clocks that
// dated it disagree. Age is then the younger of the ages known.
type ClockDoubt struct {
	// Server is the age by the ensemble's dates; Record and Now are the
	// epochs of the leaders that dated the record and the stamp.
	Server      time.Duration
	Record, Now uint32
	// Host is the age by host clocks, and Writer the host that wrote the
	// record; Writer is "" when the record does not carry its clock.
	Host   time.Duration
	Writer string
}

func (d *ClockDoubt) String() string {
	server := fmt.Sprintf("%s old by the servers' clocks", roundAge(d.Server))
	if d.Server < 0 {
		server = fmt.Sprintf("dated %s in the future by the servers' clocks", roundAge(-d.Server))
	}
	switch {
	case d.Record == d.Now && (d.Now != standaloneEpoch || d.Writer == ""):
		return fmt.Sprintf("%s (the leader's clock went back since it dated the record, epoch 0x%x)", server, d.Now)
	case d.Record == d.Now:
		server += " (written by a standalone server, whose clock may have been set since)"
	default:
		server += fmt.Sprintf(" (written under leader epoch 0x%x, now 0x%x)", d.Record, d.Now)
	}
	if d.Writer == "" {
		return server + ": the servers' clocks disagree"
	}
	return fmt.Sprintf("%s but %s old by the clock of %s, which wrote it: the servers' clocks disagree by about %s",
		server, roundAge(d.Host), d.Writer, roundAge(abs(d.Server-d.Host)))
}

func abs(d time.Duration) time.Duration {
	if d < 0 {
		return -d
	}
	return d
}

// recordAge judges how old rec is, given now, a stamp written now, and
// hostNow, this host's clock read after that stamp's reply: see the rule
// above. The doubt is nil when the clocks agree.
func recordAge(rec success.Record, now lock.ServerTime, hostNow time.Time) (time.Duration, *ClockDoubt) {
	server := now.At.Sub(rec.At)
	d := &ClockDoubt{Server: server, Record: rec.Epoch, Now: now.Epoch}
	if rec.Epoch == now.Epoch && now.Epoch != standaloneEpoch {
		if server < 0 {
			return server, d
		}
		return server, nil
	}
	if !rec.ByZklock || rec.Owner.Written.IsZero() {
		if server < 0 {
			return server, d
		}
		return server, nil
	}
	d.Host, d.Writer = hostNow.Sub(rec.Owner.Written), rec.Owner.Host
	if server >= 0 && abs(server-d.Host) <= clockTolerance {
		return server, nil
	}
	return min(server, d.Host), d
}
