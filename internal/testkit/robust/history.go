package robust

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"time"
)

// Kind is the recipe a path is locked with.
type Kind string

const (
	// Exclusive is `zklock run` and `tryrun`: one holder at a time.
	Exclusive Kind = "exclusive"
	// ReadWrite is `--shared` readers beside exclusive writers on one path.
	ReadWrite Kind = "read-write"
	// Semaphore is `--limit N`: at most Limit holders at once.
	Semaphore Kind = "semaphore"
	// OncePer is an exclusive lock under `--once-per`: at most one success
	// per Window.
	OncePer Kind = "once-per"
	// Pool is `--resources`: Members named under the path, each an
	// exclusive lock at <path>/<member>, handed out by zklock (pool.go).
	Pool Kind = "pool"
)

// Path is one lock path of a run and the rule its holders obey.
type Path struct {
	Name string `json:"name"`
	Kind Kind   `json:"kind"`
	// Limit is a Semaphore's number of leases.
	Limit int `json:"limit,omitempty"`
	// Window is a OncePer path's window.
	Window time.Duration `json:"window,omitempty"`
	// Supersede marks an Exclusive path whose contenders all pass
	// `--supersede` (supersede.go).
	Supersede bool `json:"supersede,omitempty"`
	// Members are a Pool's member names.
	Members []string `json:"members,omitempty"`
}

// Role is what a run asked for on its paths.
type Role string

const (
	// Holder takes the path's recipe as the path is kinded: the exclusive
	// lock, a lease, or the once-per lock.
	Holder Role = "holder"
	// Reader holds a ReadWrite path shared.
	Reader Role = "reader"
	// Writer holds a ReadWrite path exclusive.
	Writer Role = "writer"
)

// Life is a command's first and last sign of life, in monotonic
// nanoseconds: from the moment it held its kernel lock to the last beat of
// any process of its tree.
type Life struct {
	First int64 `json:"first"`
	Last  int64 `json:"last"`
}

// Run is one zklock process of the history.
type Run struct {
	ID       string   `json:"id"`
	Workload string   `json:"workload"`
	Paths    []string `json:"paths"`
	Role     Role     `json:"role"`
	Host     string   `json:"host"`
	PID      int      `json:"pid"`
	// Invoked and Exited are when zklock was started and reaped, in
	// monotonic nanoseconds; WallInvoked and WallExited the same on the
	// wall clock, for a reader of the report.
	Invoked     int64     `json:"invoked"`
	Exited      int64     `json:"exited"`
	WallInvoked time.Time `json:"wall_invoked"`
	WallExited  time.Time `json:"wall_exited"`
	// Life is nil when the command never ran.
	Life *Life `json:"life,omitempty"`
	// Tokens are the fencing tokens the command was given, by path.
	Tokens map[string]int64 `json:"tokens,omitempty"`
	// Take is how many members a run of a Pool asked for, and Resources
	// the members ZKLOCK_RESOURCES named to its command.
	Take      int      `json:"take,omitempty"`
	Resources []string `json:"resources,omitempty"`
	// Session is the session id the command was given, as zklock writes it.
	Session string `json:"session,omitempty"`
	// Conflict is the kernel detector's verdict: the command could not take
	// its kernel lock without waiting, so another holder's tree was alive.
	Conflict bool `json:"conflict,omitempty"`
	// Exit is zklock's exit code as its parent saw it; -1 when a signal
	// ended it (Signal says which).
	Exit int `json:"exit"`
	// CommandExit is the code the workload told the command to exit with:
	// zklock passes it on.
	CommandExit int    `json:"command_exit,omitempty"`
	Signal      string `json:"signal,omitempty"`
	// Killed is set when the nemesis itself killed this zklock.
	Killed bool `json:"killed,omitempty"`
	// Unrecorded is set when zklock said it could not record a success
	// under --once-per: by design, the window then does not start.
	Unrecorded bool `json:"unrecorded,omitempty"`
	// Revoked is set when zklock said it was revoked.
	Revoked bool `json:"revoked,omitempty"`
	// OrderKey is the run's `--order-key`, nil without one.
	OrderKey *int64 `json:"order_key,omitempty"`
	// SupersededBy is set when zklock said a newer contender made it
	// leave a `--supersede` queue, with what it said of that contender.
	SupersededBy *Superseder `json:"superseded_by,omitempty"`
	// Outcome is the outcome of zklock's exit event (--log-format json),
	// "" when it wrote none.
	Outcome string `json:"outcome,omitempty"`
	// Stderr is zklock's last line on stderr.
	Stderr string `json:"stderr,omitempty"`
}

// Fault is one fault the nemesis injected, from its start to its heal (for
// a server killed or restarted, to the moment it served again).
type Fault struct {
	Kind   string `json:"kind"`
	Target string `json:"target"`
	Start  int64  `json:"start"`
	End    int64  `json:"end"`
}

// History is everything a run of the suite recorded.
type History struct {
	Seed int64 `json:"seed"`
	// Session is the session timeout T the runs asked for.
	Session time.Duration `json:"session"`
	Paths   []Path        `json:"paths"`
	Runs    []Run         `json:"runs"`
	Faults  []Fault       `json:"faults"`
	// Begin and End bound the workload, in monotonic nanoseconds.
	Begin int64 `json:"begin"`
	End   int64 `json:"end"`
	// Expired are the sessions the servers expired (from their logs), as
	// zklock writes a session id.
	Expired []string `json:"expired,omitempty"`
}

// Record is one line of a history file: exactly one field is set.
type Record struct {
	Path    *Path    `json:"path,omitempty"`
	Run     *Run     `json:"run,omitempty"`
	Fault   *Fault   `json:"fault,omitempty"`
	Header  *History `json:"header,omitempty"`
	Expired string   `json:"expired,omitempty"`
}

// ReadHistory reads a history file: JSON lines of Records, appended as the
// run went on, so that a run cut short still leaves what it saw.
func ReadHistory(r io.Reader) (History, error) {
	var h History
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for n := 1; sc.Scan(); n++ {
		var rec Record
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			return h, fmt.Errorf("history line %d: %w", n, err)
		}
		switch {
		case rec.Header != nil:
			paths, runs, faults, expired := h.Paths, h.Runs, h.Faults, h.Expired
			h = *rec.Header
			h.Paths = append(paths, h.Paths...)
			h.Runs, h.Faults, h.Expired = append(runs, h.Runs...), append(faults, h.Faults...), append(expired, h.Expired...)
		case rec.Path != nil:
			h.Paths = append(h.Paths, *rec.Path)
		case rec.Run != nil:
			h.Runs = append(h.Runs, *rec.Run)
		case rec.Fault != nil:
			h.Faults = append(h.Faults, *rec.Fault)
		case rec.Expired != "":
			h.Expired = append(h.Expired, rec.Expired)
		}
	}
	return h, sc.Err()
}
