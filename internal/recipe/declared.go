package recipe

import (
	"bytes"
	"encoding/json"
)

// declared is what the recipes read from a contender's data. zklock writes a
// JSON object into each of its nodes (host, pid, command line and more, for
// people); three of its members are part of the protocol between
// contenders:
//
//   - "zklock", non-empty: the contender recognises every library's node
//     names, so its nodes are no flavor conflict whatever their names (see
//     FlavorConflictError);
//   - "limit": the semaphore limit its holder declared, so that holders
//     that disagree are told (see LimitMismatchError);
//   - "revoke": a revocation its holder was asked for and goes on
//     regardless of (see Revocation);
//   - "supersede": the contender is one of a superseding queue, and
//     "superseded_by": a newer contender told it to leave (supersede.go),
//     named by its "host" and "pid".
//
// Any other data (Curator writes the client's IP address, Kazoo its
// identifier) declares nothing.
type declared struct {
	Zklock string     `json:"zklock"`
	Limit  int        `json:"limit"`
	Revoke Revocation `json:"revoke"`

	Host         string      `json:"host"`
	PID          int         `json:"pid"`
	Supersede    *Supersede  `json:"supersede"`
	SupersededBy *Superseder `json:"superseded_by"`
}

// declaration reads what data declares; ok is false for data that is not
// a zklock's.
func declaration(data []byte) (d declared, ok bool) {
	if len(data) == 0 || data[0] != '{' || json.Unmarshal(data, &d) != nil || d.Zklock == "" {
		return declared{}, false
	}
	return d, true
}

// byZklock reports whether data was written by a zklock.
func byZklock(data []byte) bool {
	_, ok := declaration(data)
	return ok
}

// mayMention reports whether data, as JSON, may hold the object key key (a
// lower-case ASCII word). encoding/json matches keys regardless of case,
// Unicode's folds included (the Kelvin sign is a k), and an escape
// sequence can spell any letter; so it is true for data that holds the
// word in any ASCII case, a non-ASCII byte or an escape. false means no
// decoding of data can find the key.
func mayMention(data []byte, key string) bool {
	for _, c := range data {
		if c >= 0x80 {
			return true
		}
	}
	if bytes.Contains(data, []byte(`\u`)) {
		return true
	}
	for i := 0; i+len(key) <= len(data); i++ {
		if data[i]|0x20 == key[0] && bytes.EqualFold(data[i:i+len(key)], []byte(key)) {
			return true
		}
	}
	return false
}
