package cmd

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/pflag"
	"github.com/zklock/zklock/internal/config"
	"github.com/zklock/zklock/internal/view"
	"github.com/zklock/zklock/zkconn"
)

// envConfig names the one configuration file to read instead of the user's
// and the system's.
const envConfig = "ZKLOCK_CONFIG"

// systemConfig is the system-wide file; a variable so that tests need not
// write to /etc.
var systemConfig = config.SystemPath

// setting is a flag whose value may also come from the environment and the
// configuration files. Its key in a file is the flag's name with "_" for
// "-". A file's value is handed to the flag's own Set, so it is checked by
// the same code as the flag, and every flag type works in a file as it does
// on the command line.
type setting struct {
	flag string
	env  string // "" when no variable sets it
	// group names settings that give the same thing in different ways
	// (--auth and --auth-file). Only the members given by the highest
	// source are taken, so a lower layer never adds a second, conflicting
	// way under a higher one.
	group string
	// secret settings are shown masked, and cannot be written in a file,
	// which others can often read: a file names a file with the secret.
	secret bool
}

// settings are the flags that the environment and the files can set, in the
// order `zklock config` prints them.
var settings = []setting{
	{flag: "servers", env: envServers},
	{flag: "session-timeout"},
	{flag: "connect-timeout"},
	{flag: "auth", env: envAuth, group: "auth", secret: true},
	{flag: "auth-file", env: envAuthFile, group: "auth"},
	{flag: "tls"},
	{flag: "tls-ca", env: envTLSCA},
	{flag: "tls-cert", env: envTLSCert},
	{flag: "tls-key", env: envTLSKey},
	{flag: "jaas", env: envJAAS, group: "sasl"},
	{flag: "jaas-section"},
	{flag: "sasl", group: "sasl"},
	{flag: "sasl-principal"},
	{flag: "sasl-password-file"},
	{flag: "keytab"},
	{flag: "sasl-service"},
	{flag: "flavor"},
	{flag: "progress", env: envProgress},
	{flag: "log-format", env: envLogFormat},
	{flag: "metrics-file", env: envMetricsFile},
}

func (s setting) key() string { return strings.ReplaceAll(s.flag, "-", "_") }

// configKey says whether key may be written in a configuration file.
func configKey(key string) bool {
	for _, s := range settings {
		if s.key() == key && !s.secret {
			return true
		}
	}
	return false
}

// fileKeys lists the keys a configuration file may set, for config --help.
func fileKeys() string {
	var keys []string
	for _, s := range settings {
		if configKey(s.key()) {
			keys = append(keys, s.key())
		}
	}
	return strings.Join(keys, ", ")
}

// Where a setting's value came from, highest precedence first; the
// built-in default last, below every source.
const (
	fromFlag = iota
	fromEnv
	fromFile // fromFile+i: the i-th file read

	fromDefault = -1
)

// builtIn is the origin of a setting that no source gave.
var builtIn = origin{rank: fromDefault, where: "default"}

// origin is where one setting's value came from.
type origin struct {
	rank  int    // fromFlag, fromEnv, fromFile+i, or fromDefault
	where string // "flag", "env ZKLOCK_SERVERS", "/etc/zklock/config.toml:3", "default"
}

// resolved is the outcome of applying the sources to the flags: what each
// setting is, and where it came from.
type resolved struct {
	files   []*config.File
	tried   config.Locations
	denied  []string // default files this user may not read, skipped
	rows    []resolvedRow
	hasPass bool // ZKLOCK_SASL_PASSWORD was set
}

type resolvedRow struct {
	s      setting
	value  string
	origin origin
}

// resolve fills in each setting that no flag gave, from the environment,
// then the files, in that order of precedence: flag, environment, the
// user's file, the system's file, the built-in default. lookup finds a
// setting's flag; a setting with no flag on this command is skipped.
func resolve(lookup func(string) *pflag.Flag, getenv func(string) string) (*resolved, error) {
	r := &resolved{tried: config.Locate(getenv, envConfig)}
	r.tried.System = systemConfig
	files, denied, err := config.Load(r.tried, configKey)
	if err != nil {
		return nil, &UsageError{Err: err}
	}
	r.files, r.denied = files, denied
	// Find each setting's highest source first, then keep, in each group,
	// only the members from the group's highest one.
	type found struct {
		s    setting
		f    *pflag.Flag
		o    origin
		text string
	}
	var all []found
	top := map[string]int{}
	for _, s := range settings {
		f := lookup(s.flag)
		if f == nil {
			continue
		}
		fd := found{s: s, f: f, o: builtIn}
		switch {
		case f.Changed:
			fd.o = origin{fromFlag, "flag --" + s.flag}
		case s.env != "" && getenv(s.env) != "":
			fd.o, fd.text = origin{fromEnv, "env " + s.env}, getenv(s.env)
		default:
			for i, file := range files {
				if v, ok := file.Values[s.key()]; ok {
					fd.o, fd.text = origin{fromFile + i, fmt.Sprintf("%s:%d", file.Path, v.Line)}, v.Text
					break
				}
			}
		}
		if s.group != "" && fd.o != builtIn {
			if t, ok := top[s.group]; !ok || fd.o.rank < t {
				top[s.group] = fd.o.rank
			}
		}
		all = append(all, fd)
	}
	for _, fd := range all {
		if t, ok := top[fd.s.group]; ok && fd.o.rank > t {
			fd.o = builtIn
		}
		if fd.o.rank >= fromEnv {
			if err := fd.f.Value.Set(fd.text); err != nil {
				return nil, r.badValue(fd.s, fd.o, err)
			}
		}
		r.rows = append(r.rows, resolvedRow{s: fd.s, value: fd.f.Value.String(), origin: fd.o})
	}
	r.hasPass = getenv(envSASLPassword) != ""
	return r, nil
}

// notBoolean says which words a boolean setting takes.
const notBoolean = "not a boolean: write true or false (or 1, 0)"

// badValue is the usage error for a value from the environment or a file,
// naming where it was written.
func (r *resolved) badValue(s setting, o origin, err error) error {
	// A boolean's parser speaks of itself (strconv.ParseBool: parsing "yes":
	// invalid syntax); say which words it takes instead.
	var num *strconv.NumError
	if errors.As(err, &num) && num.Func == "ParseBool" {
		err = fmt.Errorf("%q is %s", num.Num, notBoolean)
	}
	if o.rank == fromEnv {
		return usageErrorf("%s: %v", s.env, err)
	}
	return &UsageError{Err: r.files[o.rank-fromFile].At(s.key(), err.Error())}
}

// masked is a secret value as it may be shown: the scheme and the user of
// digest:user:password, never the password.
func masked(v string) string {
	if v == "" || v == "x509" {
		return v
	}
	if parts := strings.SplitN(v, ":", 3); len(parts) == 3 {
		return parts[0] + ":" + parts[1] + ":********"
	}
	return "********"
}

func (row resolvedRow) shown() string {
	// Credentials written where a file's name belongs are masked too.
	if row.s.secret {
		return masked(row.value)
	}
	if _, err := zkconn.ParseAuth(row.value); err == nil && strings.HasPrefix(row.value, "digest:") {
		return masked(row.value)
	}
	return row.value
}

// print writes the effective settings as a table: key, value, source.
func (r *resolved) print(w io.Writer) {
	fmt.Fprintf(w, "# files: %s\n", r.filesRead())
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "KEY\tVALUE\tSOURCE")
	implied := r.tlsImpliedBy()
	for _, row := range r.rows {
		// A value from a file (one in /etc is another's to write) or the
		// environment is shown as messages quote values: escaped, and cut
		// short, or it would pad every row of the table to its width.
		v, where := view.Cell(row.shown()), view.Cell(row.origin.where)
		if v == "" {
			v = `""`
		}
		if row.s.key() == "tls" && v == "false" && row.origin == builtIn && implied != "" {
			// The connection uses TLS all the same: say so, and why.
			v, where = "true", "implied by "+implied
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", row.s.key(), v, where)
	}
	if r.hasPass {
		fmt.Fprintf(tw, "sasl_password\t********\tenv %s\n", envSASLPassword)
	}
	tw.Flush()
}

// tlsImpliedBy names the first of the TLS file settings that is set, if
// any: each of them turns TLS on without tls itself.
func (r *resolved) tlsImpliedBy() string {
	for _, row := range r.rows {
		switch row.s.key() {
		case "tls_ca", "tls_cert", "tls_key":
			if row.value != "" {
				return row.s.key()
			}
		}
	}
	return ""
}

// tlsContradicted reports a tls = false given somewhere (where) while a
// TLS file setting (by) turns TLS on: which one was meant cannot be told.
func (r *resolved) tlsContradicted() (where, by string) {
	by = r.tlsImpliedBy()
	for _, row := range r.rows {
		if row.s.key() == "tls" && row.value == "false" && row.origin != builtIn && by != "" {
			return row.origin.where, by
		}
	}
	return "", ""
}

// filesRead says which files were read, which were looked for, and which
// were skipped for want of permission.
func (r *resolved) filesRead() string {
	var read []string
	for _, f := range r.files {
		read = append(read, f.Path)
	}
	said := strings.Join(read, ", ")
	if len(read) == 0 {
		var looked []string
		for _, p := range []string{r.tried.Explicit, r.tried.User, r.tried.System} {
			if p != "" {
				looked = append(looked, p)
			}
		}
		said = "none (looked for " + strings.Join(looked, ", ") + ")"
	}
	for _, p := range r.denied {
		said += "; skipped " + p + ": permission denied"
	}
	return said
}

// logf prints, for -v, the files read and every setting not left at its
// default.
func (r *resolved) logf(logf func(string, ...any)) {
	logf("config files: %s", r.filesRead())
	for _, row := range r.rows {
		if row.origin != builtIn {
			logf("setting %s = %s (from %s)", row.s.key(), row.shown(), row.origin.where)
		}
	}
	if r.hasPass {
		logf("setting sasl_password = ******** (from env %s)", envSASLPassword)
	}
}
