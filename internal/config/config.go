// Package config reads zklock's configuration files: flat TOML documents of
// key = value lines, where each value is kept as the text a flag would be
// given, together with the line it came from. The caller knows what each key
// means and validates the text itself (with the same code that validates the
// flag), so that a bad value is reported with its file and line, and a new
// key needs no code here.
package config

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/pelletier/go-toml/v2/unstable"
	"github.com/zklock/zklock/internal/files"
)

// Value is one key's value as text, and where it was written.
type Value struct {
	Text string
	Line int
}

// File is one configuration file that was read.
type File struct {
	Path   string
	Values map[string]Value
}

// Error is a file that cannot be used: a syntax error, an unknown key, a value
// of the wrong kind, or one its key's validation refused. Error() is one line,
// "path:line: reason", as compilers write it.
type Error struct {
	Path   string
	Line   int // 0: the file as a whole (it cannot be read)
	Reason string
	cause  error // why it could not be read (fs.ErrPermission…), if so
}

func (e *Error) Error() string {
	if e.Line == 0 {
		return e.Path + ": " + e.Reason
	}
	return fmt.Sprintf("%s:%d: %s", e.Path, e.Line, e.Reason)
}

// Unwrap is why the file could not be read, if that is the error.
func (e *Error) Unwrap() error { return e.cause }

// At is an Error for the value of key in f, for the caller's validation.
func (f *File) At(key, reason string) *Error {
	return &Error{Path: f.Path, Line: f.Values[key].Line, Reason: key + ": " + reason}
}

// Parse reads a document whose keys must all be in known. Values may be
// strings, integers or booleans, each kept as its text ("10", "true"); the
// caller decides which fits.
//
// It walks the document with go-toml's expression parser rather than
// decoding it into a struct, because only the parser tells the line of every
// key, and the caller's own checks need that line as much as the syntax
// errors do.
func Parse(path string, data []byte, known func(key string) bool) (*File, error) {
	f := &File{Path: path, Values: map[string]Value{}}
	// Editors on Windows start UTF-8 files with a byte order mark, which
	// TOML does not allow for; it carries nothing.
	data = bytes.TrimPrefix(data, []byte("\ufeff"))
	var p unstable.Parser
	p.Reset(data)
	line := func(b []byte) int {
		if len(b) == 0 {
			return 0
		}
		return p.Shape(p.Range(b)).Start.Line
	}
	for p.NextExpression() {
		e := p.Expression()
		switch e.Kind {
		case unstable.KeyValue:
		case unstable.Table, unstable.ArrayTable:
			return nil, &Error{Path: path, Line: keyLine(&p, e), Reason: "tables are not used: write every key at the top level"}
		default:
			continue // comments, blank lines
		}
		var parts []string
		for it := e.Key(); it.Next(); {
			parts = append(parts, string(it.Node().Data))
		}
		key, ln := strings.Join(parts, "."), keyLine(&p, e)
		if !known(key) {
			return nil, &Error{Path: path, Line: ln, Reason: fmt.Sprintf("unknown key %q", key)}
		}
		if _, dup := f.Values[key]; dup {
			return nil, &Error{Path: path, Line: ln, Reason: fmt.Sprintf("key %q is set twice", key)}
		}
		v := e.Value()
		switch v.Kind {
		case unstable.String, unstable.Integer, unstable.Bool:
		default:
			return nil, &Error{Path: path, Line: ln, Reason: fmt.Sprintf("%s: want a string, not a value of kind %s", key, strings.ToLower(v.Kind.String()))}
		}
		if bytes.ContainsAny(v.Data, "\r\n") {
			return nil, &Error{Path: path, Line: ln, Reason: key + ": a value is one line"}
		}
		f.Values[key] = Value{Text: string(v.Data), Line: ln}
	}
	if err := p.Error(); err != nil {
		var perr *unstable.ParserError
		if errors.As(err, &perr) {
			return nil, &Error{Path: path, Line: line(perr.Highlight), Reason: perr.Message}
		}
		return nil, &Error{Path: path, Reason: err.Error()}
	}
	return f, nil
}

// keyLine is the line of an expression's key.
func keyLine(p *unstable.Parser, e *unstable.Node) int {
	it := e.Key()
	if !it.Next() {
		return 0
	}
	return p.Shape(it.Node().Raw).Start.Line
}

// Read reads and parses the file at path. A file that does not exist is
// (nil, nil) when optional, an error otherwise.
func Read(path string, optional bool, known func(string) bool) (*File, error) {
	data, err := files.Config.Read(path)
	var fe *files.Error
	switch {
	case optional && errors.Is(err, fs.ErrNotExist):
		return nil, nil
	case errors.As(err, &fe) && errors.Unwrap(err) != nil:
		return nil, &Error{Path: path, Reason: "cannot read: " + errors.Unwrap(err).Error(), cause: errors.Unwrap(err)}
	case errors.As(err, &fe):
		return nil, &Error{Path: path, Reason: fe.Problem}
	case err != nil:
		return nil, &Error{Path: path, Reason: "cannot read: " + err.Error(), cause: err}
	}
	return Parse(path, data, known)
}

// MaxSize bounds a configuration file (files.Config): a few dozen
// settings fit many times over.
const MaxSize = 64 << 10

// Locations are the files zklock's settings come from.
type Locations struct {
	// Explicit is $ZKLOCK_CONFIG: when set, the only file, which must exist.
	Explicit string
	// User is $XDG_CONFIG_HOME/zklock/config.toml, else
	// ~/.config/zklock/config.toml; "" when neither variable is set (cron
	// may run a job with no HOME at all).
	User string
	// System is /etc/zklock/config.toml.
	System string
}

// SystemPath is the system-wide file.
const SystemPath = "/etc/zklock/config.toml"

// Locate finds the files from the environment. It reads XDG_CONFIG_HOME and
// HOME itself rather than through os.UserConfigDir, whose fallbacks differ
// by platform: a Linux fleet and a Mac laptop read the same place.
func Locate(getenv func(string) string, envExplicit string) Locations {
	l := Locations{Explicit: getenv(envExplicit), System: SystemPath}
	if dir := getenv("XDG_CONFIG_HOME"); filepath.IsAbs(dir) {
		l.User = filepath.Join(dir, "zklock", "config.toml")
	} else if home := getenv("HOME"); home != "" {
		l.User = filepath.Join(home, ".config", "zklock", "config.toml")
	}
	return l
}

// Load reads the files of l, highest precedence first: the explicit file
// alone, or else the user's file and then the system's, either of which may
// be missing. A default file this user may not read counts as missing too:
// run with another user's HOME (sudo or setpriv keep it), the user file is
// that user's, not this one's. Those are returned as denied, for -v to
// say. The explicit file is the one asked for: not reading it is an error.
func Load(l Locations, known func(string) bool) (files []*File, denied []string, err error) {
	if l.Explicit != "" {
		f, err := Read(l.Explicit, false, known)
		if err != nil {
			return nil, nil, err
		}
		return []*File{f}, nil, nil
	}
	for _, p := range []string{l.User, l.System} {
		if p == "" {
			continue
		}
		f, err := Read(p, true, known)
		if errors.Is(err, fs.ErrPermission) {
			denied = append(denied, p)
			continue
		}
		if err != nil {
			return nil, nil, err
		}
		if f != nil {
			files = append(files, f)
		}
	}
	return files, denied, nil
}
