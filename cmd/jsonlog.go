package cmd

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"time"
)

// jsonLog is zklock's stderr under --log-format json: one JSON object a
// line, written by log/slog's JSON handler, with the keys documented in
// docs/guide/events.md (TestEventKeys holds them to it). Every object has
// ts, level, msg, event and path; trace_id too when TRACEPARENT names a
// trace. It is only built when asked for: a text run never sets up slog.
type jsonLog struct {
	log *slog.Logger
}

// The levels, as the level key spells them.
var levelNames = map[slog.Level]string{
	slog.LevelDebug: "debug",
	slog.LevelInfo:  "info",
	slog.LevelWarn:  "warning",
	slog.LevelError: "error",
}

// tsLayout is RFC 3339 in UTC with nanoseconds, always nine digits, so
// that the times of one stream sort as text.
const tsLayout = "2006-01-02T15:04:05.000000000Z07:00"

func newJSONLog(w io.Writer, getenv func(string) string) *jsonLog {
	h := slog.NewJSONHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug, ReplaceAttr: jsonKey})
	l := slog.New(h)
	if id, ok := traceID(getenv("TRACEPARENT")); ok {
		l = l.With(slog.String("trace_id", id))
	}
	return &jsonLog{log: l}
}

// jsonKey renames slog's built-in keys to the documented ones: time
// becomes ts, in UTC with nanoseconds, and the level is spelled in lower
// case, warning in full.
func jsonKey(groups []string, a slog.Attr) slog.Attr {
	if len(groups) > 0 {
		return a
	}
	switch a.Key {
	case slog.TimeKey:
		return slog.String("ts", jsonTime(a.Value.Time()))
	case slog.LevelKey:
		if l, ok := a.Value.Any().(slog.Level); ok {
			if name, ok := levelNames[l]; ok {
				return slog.String(slog.LevelKey, name)
			}
		}
	}
	return a
}

// jsonTime is how every time in an event is written.
func jsonTime(t time.Time) string { return t.UTC().Format(tsLayout) }

// line writes one object: the event's name, its path, then its fields.
func (j *jsonLog) line(level slog.Level, event, msg, path string, fields ...slog.Attr) {
	attrs := make([]slog.Attr, 0, 2+len(fields))
	attrs = append(attrs, slog.String("event", event), slog.String("path", path))
	attrs = append(attrs, fields...)
	j.log.LogAttrs(context.Background(), level, msg, attrs...)
}

// traceID is the trace id of a W3C traceparent header value
// (version-traceid-parentid-flags, lower-case hex): ok is false for a value
// that is not one, which is then ignored. A later version may append
// fields after the flags; version ff is invalid, as are all-zero ids.
func traceID(tp string) (string, bool) {
	const size = 55 // 2+1+32+1+16+1+2
	if len(tp) < size || (len(tp) > size && (tp[:2] == "00" || tp[size] != '-')) {
		return "", false
	}
	version, trace, parent, flags := tp[0:2], tp[3:35], tp[36:52], tp[53:55]
	if tp[2] != '-' || tp[35] != '-' || tp[52] != '-' || version == "ff" ||
		!lowerHex(version) || !lowerHex(trace) || !lowerHex(parent) || !lowerHex(flags) ||
		strings.Trim(trace, "0") == "" || strings.Trim(parent, "0") == "" {
		return "", false
	}
	return trace, true
}

func lowerHex(s string) bool {
	for _, c := range s {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}
