package view

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/zklock/zklock/internal/success"
	"github.com/zklock/zklock/internal/tree"
)

// SuccessJSON is the JSON form of a lock path's last successful run.
type SuccessJSON struct {
	At     time.Time `json:"at"` // the server's time of the record
	Zklock bool      `json:"zklock"`
	Host   string    `json:"host,omitempty"`
	PID    int       `json:"pid,omitempty"`
	User   string    `json:"user,omitempty"`
	Cmd    []string  `json:"cmd,omitempty"`
	// CmdBytes is the command byte for byte (base64), when an argument
	// is not valid UTF-8.
	CmdBytes [][]byte `json:"cmd_bytes,omitempty"`
	Client   string   `json:"client,omitempty"` // a record not written by zklock, as text
	// OrderKey is the --order-key of the run that succeeded: a run with
	// a lower key is outdated.
	OrderKey *int64 `json:"order_key,omitempty"`
}

func successJSON(s *success.Record) *SuccessJSON {
	if s == nil {
		return nil
	}
	j := &SuccessJSON{At: s.At, Zklock: s.ByZklock, Client: s.Raw}
	if s.ByZklock {
		j.Host, j.PID, j.User, j.Cmd, j.CmdBytes = s.Owner.Host, s.Owner.PID, s.Owner.User, s.Owner.Cmd, s.Owner.CmdBytes
		j.OrderKey = s.Owner.OrderKey
	}
	return j
}

// LastSuccess describes a lock path's last successful run in one line, e.g.
// "last success at /locks/report: 03:00:04 (9h2m ago) on web-3 pid 81233
// (./report.sh)". The age counts on this host's clock, for reading only.
func LastSuccess(s success.Record, now time.Time) string {
	return fmt.Sprintf("last success at %s: %s %s", Escape(s.Path), since(s.At, now), successBy(s))
}

// Forgotten says which success record was deleted, with its time on the
// server's clock, e.g. "forgot the last success at /locks/report:
// 2026-11-21T03:00:04Z on web-3 pid 81233 (./report.sh)".
func Forgotten(s success.Record) string {
	return fmt.Sprintf("forgot the last success at %s: %s %s", Escape(s.Path), s.At.UTC().Format(time.RFC3339), successBy(s))
}

// successBy says who recorded a success: where and what ran, or the
// foreign record as text.
func successBy(s success.Record) string {
	switch {
	case s.ByZklock && s.Owner.OrderKey != nil:
		return fmt.Sprintf("on %s pid %d (%s), order key %d", Cell(orDash(s.Owner.Host)), s.Owner.PID, Cell(s.Owner.CommandLine()), *s.Owner.OrderKey)
	case s.ByZklock:
		return fmt.Sprintf("on %s pid %d (%s)", Cell(orDash(s.Owner.Host)), s.Owner.PID, Cell(s.Owner.CommandLine()))
	case s.Raw != "":
		return "by " + Cell(s.Raw)
	}
	return "(not zklock)"
}

// LastSuccesses writes one LastSuccess line per queue that has a record.
func LastSuccesses(w io.Writer, qs []tree.Queue, now time.Time) error {
	var b strings.Builder
	for _, q := range qs {
		if q.LastSuccess != nil {
			b.WriteString(LastSuccess(*q.LastSuccess, now) + "\n")
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}
