package lock

import (
	"encoding/json"
	"os"
	"os/user"
	"strings"
	"time"
)

// Owner is the JSON data zklock writes into its contender node, so that
// `list`, `holders` and the busy message can say who is there.
type Owner struct {
	Zklock string    `json:"zklock"` // zklock version; marks the data as ours
	Host   string    `json:"host"`
	PID    int       `json:"pid"`
	User   string    `json:"user"`
	Cmd    []string  `json:"cmd"`
	Since  time.Time `json:"since"`
	Mode   string    `json:"mode,omitempty"`  // "exclusive", "shared" or "lease"
	Limit  int       `json:"limit,omitempty"` // a semaphore's limit
}

// NewOwner describes this process.
func NewOwner(version string, argv []string, kind Kind) Owner {
	host, _ := os.Hostname()
	name := ""
	if u, err := user.Current(); err == nil {
		name = u.Username
	}
	return Owner{Zklock: version, Host: host, PID: os.Getpid(), User: name,
		Cmd: argv, Since: time.Now().UTC().Truncate(time.Millisecond), Mode: kind.String()}
}

// Encode renders the owner as node data.
func (o Owner) Encode() []byte {
	b, _ := json.Marshal(o)
	return b
}

// DecodeOwner reads node data. zklock's JSON comes back whole; anything else
// is kept as text: Curator writes the client's IP address, Kazoo its
// identifier, so Raw is the best description of such a holder. Raw is kept
// as it is, even when it is not UTF-8: whoever prints it escapes it.
func DecodeOwner(data []byte) (o Owner, raw string, ours bool) {
	if len(data) > 0 && data[0] == '{' && json.Unmarshal(data, &o) == nil && o.Zklock != "" {
		return o, "", true
	}
	return Owner{}, strings.TrimSpace(string(data)), false
}

// CommandLine renders the owner's command the way a shell user would type
// it, quoting the arguments that need it.
func (o Owner) CommandLine() string {
	out := make([]string, len(o.Cmd))
	for i, a := range o.Cmd {
		if a == "" || strings.ContainsAny(a, " \t\n'\"\\$`|&;<>()*?[]{}~#!") {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		out[i] = a
	}
	return strings.Join(out, " ")
}
