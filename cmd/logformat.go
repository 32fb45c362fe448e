package cmd

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/zklock/zklock/internal/config"
)

// envLogFormat gives --log-format from the environment.
const envLogFormat = "ZKLOCK_LOG_FORMAT"

// logFormat is --log-format: how zklock writes its own lines on stderr.
type logFormat int

const (
	textFormat logFormat = iota // one line of prose each, "zklock: …"
	jsonFormat                  // one JSON object each (jsonlog.go)
)

func (f *logFormat) String() string {
	if *f == jsonFormat {
		return "json"
	}
	return "text"
}

func (f *logFormat) Type() string { return "FORMAT" }

func (f *logFormat) Choices() []string { return []string{"text", "json"} }

func (f *logFormat) Set(s string) error {
	switch s {
	case "text":
		*f = textFormat
	case "json":
		*f = jsonFormat
	default:
		return fmt.Errorf("must be text or json, not %q", s)
	}
	return nil
}

// earlyLogFormat is the format for an error found before the settings are
// resolved (a bad flag, an unknown command): what --log-format says among
// args (the last one given, before --), then the environment, then the
// configuration files. It is only consulted on that error path, so a run
// reads the files once.
func earlyLogFormat(args []string, getenv func(string) string) logFormat {
	var f logFormat
	if end := slices.Index(args, "--"); end >= 0 {
		args = args[:end]
	}
	given := ""
	for i, a := range args {
		switch {
		case a == "--log-format" && i+1 < len(args):
			given = args[i+1]
		case strings.HasPrefix(a, "--log-format="):
			given = strings.TrimPrefix(a, "--log-format=")
		}
	}
	if given != "" {
		// A bad value is the error being reported: in text.
		_ = f.Set(given)
		return f
	}
	if v := getenv(envLogFormat); v != "" {
		_ = f.Set(v)
		return f
	}
	// The files may be what failed: read every key, so that one this
	// zklock does not know still lets log_format be found.
	tried := config.Locate(getenv, envConfig)
	tried.System = systemConfig
	files, _, err := config.Load(tried, func(string) bool { return true })
	if err != nil {
		return f
	}
	for _, file := range files {
		if v, ok := file.Values["log_format"]; ok {
			_ = f.Set(v.Text)
			return f
		}
	}
	return f
}

// cobraErr is where cobra's own writes to stderr go (a help template that
// fails to print): each line is a message, so that under JSON nothing
// but JSON reaches stderr.
type cobraErr struct{ u *ui }

func (w cobraErr) Write(p []byte) (int, error) {
	for _, line := range strings.Split(strings.TrimRight(string(p), "\n"), "\n") {
		if strings.TrimSpace(line) != "" {
			w.u.errorf("%s", strings.TrimPrefix(line, "Error: "))
		}
	}
	return len(p), nil
}

var _ io.Writer = cobraErr{}
