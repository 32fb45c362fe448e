// Package owner is zklock's record of who is there: the JSON data a zklock
// writes into its contender node (host, pid, user, command line, since
// when), so that list, holders and a busy or waiting run can say who holds
// a lock. The members "zklock", "limit" and "revoke" are also read by the
// recipes in package lock.
package owner

import (
	"encoding/json"
	"fmt"
	"os"
	"os/user"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/zklock/zklock/internal/recipe"
)

// Owner is the JSON data zklock writes into its contender node, so that
// `list`, `holders` and the busy message can say who is there.
type Owner struct {
	Zklock string `json:"zklock"` // zklock version; marks the data as ours
	Host   string `json:"host"`
	PID    int    `json:"pid"`
	// PIDNS is the PID namespace PID is a pid of (Linux's
	// /proc/self/ns/pid, as "pid:[4026531836]"): containers on one host
	// number their processes alike, so a pid names a process only within
	// its namespace. "" where there are none, or from an older zklock.
	PIDNS string   `json:"pidns,omitempty"`
	User  string   `json:"user"`
	Cmd   []string `json:"cmd"`
	// CmdCut is how many bytes of the command line were left out of Cmd
	// to keep the node small; 0 when Cmd is whole.
	CmdCut int `json:"cmd_cut,omitempty"`
	// CmdBytes is Cmd byte for byte (base64 in JSON), when an argument
	// is not valid UTF-8: JSON text cannot carry such bytes, and Cmd shows
	// them as U+FFFD, another command than the one that ran. Nil when Cmd
	// is exact.
	CmdBytes [][]byte  `json:"cmd_bytes,omitempty"`
	Since    time.Time `json:"since"` // when it joined the queue
	// Acquired is when it took the lock, written into the node once it
	// holds (see recipe.Lease.MarkAcquired); zero while it waits.
	Acquired time.Time `json:"acquired,omitzero"`
	// Revoke is a revocation the holder was asked for and goes on
	// regardless (its command must not be interrupted); zero if none.
	Revoke recipe.Revocation `json:"revoke,omitzero"`
	Mode   string            `json:"mode,omitempty"`  // "exclusive", "shared" or "lease"
	Limit  int               `json:"limit,omitempty"` // a semaphore's limit
	// Supersede marks a contender of a superseding queue, with its order
	// key if it has one; nil in a plain queue (see recipe.Supersede).
	Supersede *recipe.Supersede `json:"supersede,omitempty"`
	// OrderKey is the run's --order-key: in a contender node, for list
	// and holders; in a success record, the key that last succeeded,
	// which a run with a lower key may not go past (runner's outdated.go).
	// Nil without one.
	OrderKey *int64 `json:"order_key,omitempty"`
	// SupersededBy is the newer contender that told this waiter to leave
	// its superseding queue, written by that contender; nil otherwise.
	SupersededBy *recipe.Superseder `json:"superseded_by,omitempty"`
	// Written is this host's wall clock when it wrote a success record
	// (see success.Write); zero in a contender node.
	Written time.Time `json:"written,omitzero"`
}

// HeldSince is when a holder took the lock, as well as its data tells: the
// recorded acquisition after a wait, else the time it joined, which is when
// a lock taken on joining was taken (and, for the moment a waiter's record
// is on its way, or for a zklock too old to write one, the best known).
func (o Owner) HeldSince() time.Time {
	if !o.Acquired.IsZero() {
		return o.Acquired
	}
	return o.Since
}

// MaxCmdBytes bounds the command line stored in a node. The server refuses
// a request larger than its jute.maxbuffer (1 MB by default) by dropping
// the connection, and every list and busy message reads the data: a few
// KiB say what runs.
const MaxCmdBytes = 4096

// New describes this process, taking what m asks for.
func New(version string, argv []string, m recipe.Mode) Owner {
	host, _ := os.Hostname()
	name := ""
	if u, err := user.Current(); err == nil {
		name = u.Username
	}
	cmd, cut := boundArgv(argv, MaxCmdBytes)
	return Owner{Zklock: version, Host: host, PID: os.Getpid(), PIDNS: PIDNamespace(), User: name,
		Cmd: cmd, CmdCut: cut, CmdBytes: exactBytes(cmd), Since: now(), Mode: m.Kind().String(), Limit: m.Limit()}
}

// exactBytes is argv as bytes when one of its arguments is not valid
// UTF-8, else nil.
func exactBytes(argv []string) [][]byte {
	for _, a := range argv {
		if !utf8.ValidString(a) {
			out := make([][]byte, len(argv))
			for i, a := range argv {
				out[i] = []byte(a)
			}
			return out
		}
	}
	return nil
}

// Argv is the command as it ran: CmdBytes when the record has it (and it
// matches Cmd's shape), else Cmd.
func (o Owner) Argv() []string {
	if len(o.CmdBytes) == 0 || len(o.CmdBytes) != len(o.Cmd) {
		return o.Cmd
	}
	out := make([]string, len(o.CmdBytes))
	for i, b := range o.CmdBytes {
		out[i] = string(b)
	}
	return out
}

// now is the time as the record keeps it: UTC, to the millisecond.
func now() time.Time { return time.Now().UTC().Truncate(time.Millisecond) }

// AcquiredNow is the record with Acquired set to now, for
// recipe.Lease.MarkAcquired and recipe.Lease.MarkAcquiredNow.
func (o Owner) AcquiredNow() Owner {
	o.Acquired = now()
	return o
}

// boundArgv keeps the first max bytes of argv, cutting the last argument
// kept at a character boundary, and returns how many bytes it left out.
func boundArgv(argv []string, max int) ([]string, int) {
	var out []string
	left, cut := max, 0
	for _, a := range argv {
		switch {
		case left <= 0:
			cut += len(a)
		case len(a) <= left:
			out = append(out, a)
			left -= len(a)
		default:
			keep := left
			for keep > 0 && !utf8.RuneStart(a[keep]) {
				keep--
			}
			out = append(out, a[:keep])
			cut += len(a) - keep
			left = 0
		}
	}
	return out, cut
}

// Encode renders the owner as node data.
func (o Owner) Encode() []byte {
	b, _ := json.Marshal(o)
	return b
}

// NodeData is what a contender node's data says about who is there: a
// zklock's Owner, or another client's data as text.
type NodeData struct {
	// ByZklock means the node was written by a zklock (any process, not
	// necessarily this one), so Owner is filled in; otherwise Raw is.
	ByZklock bool
	Owner    Owner
	Raw      string
}

// Decode reads node data. zklock's JSON comes back whole; anything
// else is kept as text: Curator writes the client's IP address, Kazoo its
// identifier, so Raw is the best description of such a holder. Raw is kept
// as it is, even when it is not UTF-8: whoever prints it escapes it.
func Decode(data []byte) NodeData {
	var o Owner
	if len(data) > 0 && data[0] == '{' && json.Unmarshal(data, &o) == nil && o.Zklock != "" {
		return NodeData{ByZklock: true, Owner: o}
	}
	return NodeData{Raw: strings.TrimSpace(string(data))}
}

// CommandLine renders the owner's command the way a shell user would type
// it, quoting the arguments that need it.
func (o Owner) CommandLine() string {
	argv := o.Argv()
	out := make([]string, len(argv))
	for i, a := range argv {
		if a == "" || strings.ContainsAny(a, " \t\n'\"\\$`|&;<>()*?[]{}~#!") {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		out[i] = a
	}
	s := strings.Join(out, " ")
	if o.CmdCut > 0 {
		s += fmt.Sprintf(" …[%d bytes more]", o.CmdCut)
	}
	return s
}
