package runner

import (
	"fmt"
	"time"

	"github.com/zklock/zklock/internal/recipe"
	"github.com/zklock/zklock/internal/success"
)

// How old is a success record? --once-per must answer without trusting
// one host's clock against another's, and the ensemble's clock is not one
// clock either. zklock can measure two ages, each on a pair of clocks:
//
//   - The servers' age: the mtime of a write made now (recipe.ServerTime)
//     minus the record's mtime. A znode's mtime is the wall clock of the
//     server that led when the write was proposed, and the high 32 bits of
//     its zxid are that leader's epoch. Of different epochs, the two dates
//     may come from two servers whose clocks disagree, by any amount: a
//     success dated by a leader 2h slow looks 2h older to its successor.
//     Of one epoch, they come from one server, but not always from one
//     clock: a leader's clock can step (an NTP step, a VM restored) while
//     it leads, and a standalone server numbers every write in epoch 0,
//     across restarts, with its clock perhaps set in between.
//   - The writer's age: this host's clock now minus the writer's clock
//     when it wrote the record (Owner.Written, read before the write was
//     sent). It is exact on the host that wrote the record and, across
//     hosts, off by their skew (NTP keeps that to milliseconds).
//
// The epochs say which server dated what; they do not make either age
// right. Comparing the two ages is comparing the writer's clock with the
// server's at the write (the record's mtime against Written) and again
// now (the stamp against this host's clock): a clock that stepped between
// the two, or servers whose clocks disagree across a leader change, shows
// as a difference, and zklock cannot tell which clock is wrong.
//
// The rule: the record's age is the youngest age known, and the job runs
// only when it has passed the window, so that every clock says the window
// has passed (at most once). A step or a skew delays the run by its size
// at most; both ages grow with time, so the run happens once the youngest
// has passed the window, and a success recorded then is dated by clocks
// that agree again (not never). A record dated after the stamp (a negative
// age) is "from the future": it waits out its distance from now as well.
// A record without the writer's clock (another client's, or an older
// zklock's) has the servers' age alone.

// standaloneEpoch is the epoch of every write to a standalone server.
const standaloneEpoch = 0

// clockTolerance is how far the servers' and the writer's ages of a
// record may differ before the clocks are said to disagree: the hosts'
// skew under NTP is milliseconds, and the rest allows for the time the
// record's write and the stamp's write each took to reach the leader (the
// host's clock is read before a write is sent). The rule takes the younger
// age either way; the tolerance only decides whether to say so.
const clockTolerance = 5 * time.Second

// ClockDoubt says why a success record's age is uncertain: the clocks
// that dated it disagree. The record's age is then the younger of the ages
// known.
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
	case d.Record != d.Now:
		server += fmt.Sprintf(" (written under leader epoch 0x%x, now 0x%x)", d.Record, d.Now)
	case d.Now == standaloneEpoch:
		server += " (written by a standalone server, whose clock may have been set since)"
	default:
		server += fmt.Sprintf(" (one leader's, epoch 0x%x, whose clock may have stepped since)", d.Now)
	}
	if d.Writer == "" {
		return server + ": a leader's clock went back, or the servers' clocks disagree"
	}
	host := fmt.Sprintf("%s old", roundAge(d.Host))
	if d.Host < 0 {
		host = fmt.Sprintf("dated %s in the future", roundAge(-d.Host))
	}
	return fmt.Sprintf("%s but %s by the clock of %s, which wrote it: the clocks disagree by about %s",
		server, host, d.Writer, roundAge(abs(d.Server-d.Host)))
}

func abs(d time.Duration) time.Duration {
	if d < 0 {
		return -d
	}
	return d
}

// recordAge judges how old rec is, given now, a stamp written now, and
// hostNow, this host's clock read after that stamp's reply: the youngest
// age known (see the rule above). The doubt is nil when the ages agree
// within clockTolerance and none is negative.
func recordAge(rec success.Record, now recipe.ServerTime, hostNow time.Time) (time.Duration, *ClockDoubt) {
	d := &ClockDoubt{Server: now.At.Sub(rec.At), Record: rec.Epoch, Now: now.Epoch}
	if !rec.ByZklock || rec.Owner.Written.IsZero() {
		if d.Server < 0 {
			return d.Server, d
		}
		return d.Server, nil
	}
	d.Host, d.Writer = hostNow.Sub(rec.Owner.Written), rec.Owner.Host
	age := min(d.Server, d.Host)
	if age >= 0 && abs(d.Server-d.Host) <= clockTolerance {
		return age, nil
	}
	return age, d
}
