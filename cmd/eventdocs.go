package cmd

import (
	"strings"
)

// eventDoc documents one event of --log-format json: its name, when it is
// written, and the keys it has beside the common ones. A key "a.b" is key
// b of the object a. zklock help events, run's man page and the table in
// docs/guide/events.md are rendered from eventDocs (TestDocTables), and
// TestEventKeys holds what zklock writes to them: keys may be added, but a
// key renamed or removed breaks the pipelines that read them.
type eventDoc struct {
	name, when string
	keys       []string
}

// commonKeys are in every object; trace_id only while TRACEPARENT names a
// trace.
var commonKeys = []string{"ts", "level", "event", "msg", "path", "trace_id"}

// holderKeys describe a holder: its node, who and what it is (zklock's
// nodes), the text of another client's data, and since when it holds.
var holderKeys = []string{"node", "user", "host", "pid", "cmd", "client", "since"}

func prefixed(p string, keys []string) []string {
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = p + "." + k
	}
	return out
}

func keys(groups ...[]string) []string {
	var out []string
	for _, g := range groups {
		out = append(out, g...)
	}
	return out
}

var eventDocs = []eventDoc{
	{"waiting", "the wait begins, and whenever this waiter's place in the queue changes (with `--progress`, also when the holder changes)",
		keys([]string{"position", "node"}, prefixed("holder", holderKeys))},
	{"acquired", "a lock is held: taken, or re-entered (`reentered`: an ancestor zklock's node, session and token); one per member for a pool (`resource`: the member, only with --resources)",
		[]string{"node", "session", "fencing_token", "wait_ms", "reentered", "resource"}},
	{"busy", "`tryrun` (or `--timeout 0`) found the lock taken; for a pool, `path` is the pool's and `resource` the busy member whose holder is named (none when another job was ahead in the pool's queue)", keys(prefixed("holder", holderKeys), []string{"limit", "resource"})},
	{"skipped", "`--once-per` did not run the command", keys(prefixed("last_success", []string{"at", "user", "host", "pid", "cmd", "client"}), []string{"age_ms", "window_ms"})},
	{"superseded", "`--supersede`: a run that takes precedence joined, and this waiter left the queue without running", keys([]string{"node"}, prefixed("by", []string{"node", "host", "pid", "order_key"}))},
	{"outdated", "`--order-key`: a run with a higher key already succeeded, so the command did not run", keys([]string{"order_key"}, prefixed("last_success", []string{"at", "user", "host", "pid", "cmd", "order_key"}))},
	{"started", "the command is running", []string{"pid"}},
	{"lost", "the lock can no longer be trusted while the command runs", []string{"cause", "quorum_heard_age_ms"}},
	{"possible_overlap", "after a loss, the command was found dead only after its session could have expired: the next holder may have run beside it", []string{"late_ms", "session_timeout_ms"}},
	{"revoked", "someone asked for the lock (`zklock revoke`, a Curator Revoker)", keys([]string{"node"}, prefixed("by", []string{"at", "user", "host", "pid"}))},
	{"released", "the locks are given back, one object per path", []string{"hold_ms", "confirmed"}},
	{"exit", "zklock exits: always the last object", []string{"exit_code", "outcome", "signal"}},
	{"error", "the error text mode prints (`zklock: ...`)", nil},
	{"warning", "a warning (`zklock: warning: ...`)", nil},
	{"debug", "a line of `-v`", nil},
}

// keyList shows keys compactly: "a, b, c (x, y)" for a, b and c's keys x
// and y.
func keyList(keys []string) string {
	var parts []string
	var group string
	var inner []string
	flush := func() {
		if group != "" {
			parts = append(parts, group+" ("+strings.Join(inner, ", ")+")")
			group, inner = "", nil
		}
	}
	for _, k := range keys {
		obj, sub, nested := strings.Cut(k, ".")
		if !nested {
			flush()
			parts = append(parts, k)
			continue
		}
		if obj != group {
			flush()
			group = obj
		}
		inner = append(inner, sub)
	}
	flush()
	return strings.Join(parts, ", ")
}

// eventReferences are the events as a documented list: the keys, then
// when.
func eventReferences() []reference {
	refs := []reference{{"(every event)", "`" + strings.Join(commonKeys, "`, `") + "`"}}
	for _, d := range eventDocs {
		meaning := d.when
		if len(d.keys) > 0 {
			meaning = codeList(keyList(d.keys)) + ": " + d.when
		}
		refs = append(refs, reference{"`" + d.name + "`", meaning})
	}
	return refs
}

// codeList marks each key of a keyList as code.
func codeList(s string) string {
	r := strings.NewReplacer(", ", "`, `", " (", "` (`", ")", "`)")
	out := "`" + r.Replace(s) + "`"
	return strings.ReplaceAll(out, ")`", ")")
}

// eventHelp is the events as zklock help events shows them.
func eventHelp() string {
	return "Events (--log-format json), one JSON object a line:\n" + helpList(eventReferences())
}
