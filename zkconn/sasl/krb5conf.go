package sasl

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/jcmturner/gokrb5/v8/config"
	"github.com/zklock/zklock/internal/files"
)

// ErrBadKrb5Conf marks a Kerberos configuration (krb5.conf) zklock cannot
// parse: a mistake in a file, as a bad JAAS file is, and not a failure to
// reach a KDC.
var ErrBadKrb5Conf = errors.New("bad Kerberos configuration")

// Krb5ConfError names the krb5.conf that cannot be parsed, the line at
// fault where it can be found (0 if not), and the parser's complaint.
type Krb5ConfError struct {
	File    string
	Line    int
	Problem string
}

func (e *Krb5ConfError) Error() string {
	where := "Kerberos configuration " + e.File
	if e.Line > 0 {
		where += fmt.Sprintf(", line %d", e.Line)
	}
	return where + " is invalid: " + e.Problem
}

func (e *Krb5ConfError) Is(target error) bool { return target == ErrBadKrb5Conf }

// readKrb5Conf reads and parses the krb5.conf at path.
func readKrb5Conf(path string) (*config.Config, error) {
	b, err := files.Krb5Conf.Read(path)
	if err != nil {
		return nil, err
	}
	cfg, err := config.NewFromString(string(b))
	var unsupported config.UnsupportedDirective
	if errors.As(err, &unsupported) && cfg != nil {
		// Kerberos 4's settings: gokrb5 skips them and parsed the rest,
		// which is all a Kerberos 5 login uses.
		return cfg, nil
	}
	if err != nil {
		return nil, krb5ConfError(path, string(b), err)
	}
	return cfg, nil
}

// krb5LineQuoted finds the line gokrb5 quotes in its complaints:
// "… section line (text)" or "… line invalid: text".
var krb5LineQuoted = regexp.MustCompile(`line \((.*)\)(?::|$)|line invalid: (.*)$`)

// krb5ConfError turns gokrb5's parse error into a Krb5ConfError. gokrb5
// quotes the offending line's text (without its comment, trimmed) but
// not its number, so the number is found by looking for that text.
func krb5ConfError(path, text string, err error) *Krb5ConfError {
	problem := err.Error()
	// "error processing libdefaults section: invalid krb5 config
	// libdefaults section line (x)": the prefixes repeat what the
	// message says already.
	if strings.HasPrefix(problem, "error processing ") {
		_, problem, _ = strings.Cut(problem, ": ")
	}
	problem = strings.TrimPrefix(problem, "invalid krb5 config ")
	e := &Krb5ConfError{File: path, Problem: problem}
	m := krb5LineQuoted.FindStringSubmatch(problem)
	if m == nil {
		return e
	}
	quoted := m[1] + m[2]
	for i, line := range strings.Split(text, "\n") {
		if j := strings.IndexAny(line, "#;"); j >= 0 {
			line = line[:j]
		}
		if strings.TrimSpace(line) == quoted {
			e.Line = i + 1
			break
		}
	}
	return e
}
