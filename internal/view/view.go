// Package view renders lock queues for people (an aligned table) and for
// scripts (JSON). It knows nothing of flags or ZooKeeper sessions.
package view

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/fatih/color"
	"github.com/zklock/zklock/internal/owner"
	"github.com/zklock/zklock/internal/recipe"
	"github.com/zklock/zklock/internal/tree"
)

// EntryJSON is the stable JSON form of one queue entry.
type EntryJSON struct {
	Path     string   `json:"path"`
	Position int      `json:"position"`
	Node     string   `json:"node"` // the node's path below the lock path
	Seq      int32    `json:"seq"`
	State    string   `json:"state"`  // "holding" or "waiting"
	Mode     string   `json:"mode"`   // "exclusive", "shared" or "lease"
	Flavor   string   `json:"flavor"` // node naming: "curator", "kazoo" or "unknown"
	Zklock   bool     `json:"zklock"` // the node was written by zklock
	Host     string   `json:"host,omitempty"`
	PID      int      `json:"pid,omitempty"`
	User     string   `json:"user,omitempty"`
	Cmd      []string `json:"cmd,omitempty"`
	// CmdBytes is the command byte for byte (base64), when an argument
	// is not valid UTF-8, which cmd shows as U+FFFD.
	CmdBytes [][]byte  `json:"cmd_bytes,omitempty"`
	Since    time.Time `json:"since"`
	Client   string    `json:"client,omitempty"` // another client's data, as text
	Session  string    `json:"session"`
	// Persistent: the node belongs to no session (ephemeralOwner 0), so
	// it never expires; only a delete removes it.
	Persistent bool   `json:"persistent,omitempty"`
	Limit      int    `json:"limit,omitempty"`
	Version    string `json:"zklock_version,omitempty"`
	// Revoke is a pending revocation: who asked (when zklock recorded it)
	// and when, on the server's clock.
	Revoke recipe.Revocation `json:"revoke,omitzero"`
	// OrderKey is the contender's --order-key, if it gave one.
	OrderKey *int64 `json:"order_key,omitempty"`
}

// QueueJSON is the JSON form of one lock path and its queue.
type QueueJSON struct {
	Path    string      `json:"path"`
	Recipe  string      `json:"recipe"`          // "lock" or "semaphore"
	Limit   int         `json:"limit,omitempty"` // a semaphore's limit, when known
	Entries []EntryJSON `json:"entries"`
	// LastSuccess is the last successful run under --once-per, if any.
	LastSuccess *SuccessJSON `json:"last_success,omitempty"`
}

// toJSON is e's JSON form; d is its data, decoded.
func toJSON(e recipe.Entry, d owner.NodeData) EntryJSON {
	j := EntryJSON{Path: e.Path, Position: e.Position, Node: e.Name, Seq: e.Seq,
		State: state(e), Mode: e.Kind.String(), Flavor: string(e.Flavor),
		Since: e.Created, Client: d.Raw, Session: fmt.Sprintf("0x%x", e.Session), Limit: e.Limit, Revoke: e.Revoke,
		Persistent: e.Session == 0}
	if e.Under != "" {
		// A semaphore's contender: a lease, or waiting in its mutex for one.
		j.Node, j.Mode = e.Listed(), recipe.SemaphoreLease.String()
	}
	if o := d.Owner; d.ByZklock {
		j.Zklock = true
		j.Host, j.PID, j.User, j.Cmd, j.CmdBytes, j.Version = o.Host, o.PID, o.User, o.Cmd, o.CmdBytes, o.Zklock
		j.OrderKey = orderKey(o)
		if !o.Since.IsZero() {
			j.Since = o.Since
		}
		if e.Holding && !o.HeldSince().IsZero() {
			j.Since = o.HeldSince() // a holder: since it took the lock
		}
	}
	return j
}

// orderKey is the order key a zklock's data declares: its own member, or
// the superseding queue's, where a zklock that wrote no other put it.
func orderKey(o owner.Owner) *int64 {
	if o.OrderKey == nil && o.Supersede != nil {
		return o.Supersede.Key
	}
	return o.OrderKey
}

func recipeName(r recipe.Recipe) string {
	if r == recipe.RecipeSemaphore {
		return "semaphore"
	}
	return "lock"
}

func state(e recipe.Entry) string {
	if e.Holding {
		return "holding"
	}
	return "waiting"
}

// ListJSON is the JSON form of list's answer: the locks found, and the
// paths skipped because this client may not read them.
type ListJSON struct {
	Locks   []QueueJSON `json:"locks"`
	Skipped []string    `json:"skipped"`
}

// TreeJSON writes the locks below a path and the skipped paths as one
// JSON object.
func TreeJSON(w io.Writer, t tree.Tree) error { return writeJSON(w, treeJSON(t), "  ") }

// TreeJSONLine writes what TreeJSON does on one line, for a stream of
// snapshots (list --watch).
func TreeJSONLine(w io.Writer, t tree.Tree) error { return writeJSON(w, treeJSON(t), "") }

func treeJSON(t tree.Tree) ListJSON {
	out := ListJSON{Locks: make([]QueueJSON, 0, len(t.Queues)), Skipped: append([]string{}, t.Skipped...)}
	for _, q := range t.Queues {
		qj := QueueJSON{Path: q.Path, Recipe: recipeName(q.Recipe), Limit: q.Limit, Entries: []EntryJSON{}, LastSuccess: successJSON(q.LastSuccess)}
		for _, e := range q.Entries {
			qj.Entries = append(qj.Entries, toJSON(e, owner.Decode(e.Data)))
		}
		out.Locks = append(out.Locks, qj)
	}
	return out
}

// EntriesJSON writes entries (e.g. the holders) as a JSON array.
func EntriesJSON(w io.Writer, es []recipe.Entry) error { return writeJSON(w, entriesJSON(es), "  ") }

// EntriesJSONLine writes what EntriesJSON does on one line, for a stream
// of snapshots (holders --watch).
func EntriesJSONLine(w io.Writer, es []recipe.Entry) error { return writeJSON(w, entriesJSON(es), "") }

func entriesJSON(es []recipe.Entry) []EntryJSON {
	out := make([]EntryJSON, 0, len(es))
	for _, e := range es {
		out = append(out, toJSON(e, owner.Decode(e.Data)))
	}
	return out
}

// writeJSON writes v and a newline; indented by indent, or on one line
// when indent is empty.
func writeJSON(w io.Writer, v any, indent string) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", indent)
	return enc.Encode(v)
}

// Table writes entries as an aligned table with a header. Colour is used
// only when useColor is true (the caller decides from the terminal and
// NO_COLOR). Columns are aligned on the text as it shows, before colour is
// added, so escape codes never count as width.
func Table(w io.Writer, es []recipe.Entry, withPath, useColor bool, now time.Time) error {
	hdr := []string{"POS", "STATE", "MODE", "FLAVOR", "HOST", "PID", "USER", "SINCE", "COMMAND", "NODE"}
	if withPath {
		hdr = append([]string{"PATH"}, hdr...)
	}
	bold := color.New(color.Bold)
	green := color.New(color.FgGreen)
	yellow := color.New(color.FgYellow)
	for _, c := range []*color.Color{bold, green, yellow} {
		if useColor {
			c.EnableColor()
		} else {
			c.DisableColor()
		}
	}
	rows := [][]string{hdr}
	styles := []*color.Color{bold}
	for _, e := range es {
		rows = append(rows, row(e, withPath, now))
		if e.Holding {
			styles = append(styles, green)
		} else {
			styles = append(styles, yellow)
		}
	}
	state := 1 // the STATE column
	if withPath {
		state = 2
	}
	cells := align(rows)
	var b strings.Builder
	for i, r := range cells {
		if i == 0 {
			b.WriteString(bold.Sprint(strings.Join(r, "")))
		} else {
			r[state] = styles[i].Sprint(r[state])
			b.WriteString(strings.Join(r, ""))
		}
		b.WriteString("\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// row is one entry's cells, as they show.
func row(e recipe.Entry, withPath bool, now time.Time) []string {
	d := owner.Decode(e.Data)
	j := toJSON(e, d)
	host, pid, cmd := j.Host, "-", d.Owner.CommandLine()
	if j.PID != 0 {
		pid = strconv.Itoa(j.PID)
	}
	if !d.ByZklock {
		host, cmd = orDash(j.Client), "(not zklock)"
	}
	mode, st := j.Mode, j.State
	if j.Persistent {
		st += " (persistent)" // a contender that never expires
	}
	if j.OrderKey != nil {
		st += fmt.Sprintf(", key %d", *j.OrderKey)
	}
	if e.Revoke.Pending() {
		st += ", revoke pending"
		if !d.ByZklock {
			cmd = "(revocation requested)"
		}
	}
	if j.Limit > 0 {
		mode = fmt.Sprintf("lease/%d", j.Limit)
	}
	// Every cell another client could have written is escaped: a tab
	// would break the columns, a newline forge a row. It is cut short
	// too: node data may be 1 MB, and would make every row that wide.
	r := []string{strconv.Itoa(j.Position), st, mode, Cell(j.Flavor), Cell(orDash(host)), pid,
		Cell(orDash(j.User)), since(j.Since, now), Cell(cmd), Cell(j.Node)}
	if withPath {
		r = append([]string{Cell(j.Path)}, r...)
	}
	return r
}

// Cell is text that someone else wrote (another client's node data, a
// value from a file or the environment), escaped and cut short, as a table
// or a message line shows it.
func Cell(s string) string { return Escape(CutLong(s)) }

// columnGap is the space between two columns.
const columnGap = 2

// align pads every cell but the last of each row to its column's width
// (in characters) and the gap.
func align(rows [][]string) [][]string {
	var width []int
	for _, r := range rows {
		for i, c := range r[:len(r)-1] {
			if i == len(width) {
				width = append(width, 0)
			}
			width[i] = max(width[i], utf8.RuneCountInString(c))
		}
	}
	out := make([][]string, len(rows))
	for i, r := range rows {
		out[i] = make([]string, len(r))
		for j, c := range r {
			if j < len(r)-1 {
				c += strings.Repeat(" ", width[j]-utf8.RuneCountInString(c)+columnGap)
			}
			out[i][j] = c
		}
	}
	return out
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// since shows a local timestamp and the age, e.g. "05:30:01 (2m3s ago)".
func since(t, now time.Time) string {
	if t.IsZero() {
		return "-"
	}
	age := now.Sub(t).Round(time.Second)
	if age < 0 {
		age = 0
	}
	layout := "15:04:05"
	if now.Sub(t) > 20*time.Hour {
		layout = "2006-01-02 15:04"
	}
	return fmt.Sprintf("%s (%s ago)", t.Local().Format(layout), age)
}
