// Package cmd is zklock's command line: it parses and validates flags into
// options structs and hands them to the runner, lock and view packages. It is
// also the one place that turns an outcome into an exit code.
//
// It is importable only so that zklock's main and its man-page generator
// (internal/manpages, in this module) can build the command tree. It
// makes no compatibility promise: its exported names change with the
// command line. A Go program that wants zklock's locks uses package lock.
package cmd

import (
	"context"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/zklock/zklock/lockexec"
	"github.com/zklock/zklock/zkconn"
)

// Environment variables read for defaults.
const (
	envServers  = "ZKLOCK_SERVERS"
	envAuth     = "ZKLOCK_AUTH"
	envAuthFile = "ZKLOCK_AUTH_FILE"
	envTLSCA    = "ZKLOCK_TLS_CA"
	envTLSCert  = "ZKLOCK_TLS_CERT"
	envTLSKey   = "ZKLOCK_TLS_KEY"
)

// defaultServers is the connect string when nothing else gives one: a
// ZooKeeper on this host, as scripts/demo.sh starts it.
const defaultServers = "127.0.0.1:2181"

// globalOptions are the connection flags every command shares.
type globalOptions struct {
	Servers        string
	SessionTimeout time.Duration
	ConnectTimeout time.Duration
	Auth           string // digest:user:password, from --auth or ZKLOCK_AUTH
	AuthFile       string // a file holding it, from --auth-file or ZKLOCK_AUTH_FILE
	Protect        bool
	TLS            bool
	TLSFiles       zkconn.TLSFiles
	SASL           saslOptions // cmd/sasl.go
	Verbose        bool
	LogFormat      logFormat

	settings *resolved // the sources of the settings, once resolved
}

// onCommandLine says whether flag ("--keytab") was given on the command
// line, as opposed to the environment, a file or its default.
func (g *globalOptions) onCommandLine(flag string) bool {
	if g.settings == nil {
		return true
	}
	for _, row := range g.settings.rows {
		if "--"+row.s.flag == flag {
			return row.origin.rank == fromFlag
		}
	}
	return true
}

// connOptions validates the connection flags.
func (g *globalOptions) connOptions(u *ui) (zkconn.Options, error) {
	cs, err := zkconn.ParseConnString(g.Servers)
	if err != nil {
		return zkconn.Options{}, &UsageError{Err: err}
	}
	o := zkconn.Options{ConnString: cs, SessionTimeout: g.SessionTimeout, ConnectTimeout: g.ConnectTimeout}
	auth, err := g.auth()
	if err != nil {
		return zkconn.Options{}, err
	}
	o.Auth = auth
	if o.SASL, err = g.SASL.login(g.onCommandLine); err != nil {
		return zkconn.Options{}, err
	}
	if g.Protect && auth == nil && o.SASL == nil {
		return zkconn.Options{}, usageErrorf("--protect needs credentials (--jaas, --sasl, --auth-file, --auth or %s): a protected lock path belongs to a user", envAuth)
	}
	o.Protect = g.Protect
	if g.settings != nil {
		if where, by := g.settings.tlsContradicted(); by != "" {
			return zkconn.Options{}, usageErrorf("tls is false (%s), but %s turns TLS on: drop one of them", where, by)
		}
	}
	if g.TLS || g.TLSFiles != (zkconn.TLSFiles{}) {
		if (g.TLSFiles.Cert == "") != (g.TLSFiles.Key == "") {
			return zkconn.Options{}, usageErrorf("a client certificate needs both --tls-cert and --tls-key")
		}
		cfg, err := g.TLSFiles.Config()
		if err != nil {
			return zkconn.Options{}, &UsageError{Err: err}
		}
		o.TLS = cfg
	}
	o.Warnf = u.warnf
	if g.Verbose {
		o.Debugf = u.logf
	}
	return o, nil
}

// auth reads the credentials, if any. Error messages name the flag or the
// file, never the credentials.
func (g *globalOptions) auth() (*zkconn.Auth, error) {
	var (
		a   zkconn.Auth
		err error
	)
	switch {
	case g.Auth != "" && g.AuthFile != "":
		return nil, usageErrorf("--auth and --auth-file do not combine (nor do %s and %s)", envAuth, envAuthFile)
	case g.Auth != "":
		a, err = zkconn.ParseAuth(g.Auth)
	case g.AuthFile != "":
		a, err = zkconn.ReadAuthFile(g.AuthFile)
	default:
		return nil, nil
	}
	if err != nil {
		return nil, &UsageError{Err: err}
	}
	return &a, nil
}

// hideAuthEnv removes ZKLOCK_AUTH from zklock's environment once it has been
// read, so the command under the lock (and whatever it logs) never sees it.
// The flags' defaults stay empty so that --help, which prints defaults,
// never shows a password.
func hideAuthEnv() { os.Unsetenv(envAuth) }

// Main runs zklock with the process's arguments and returns the exit code.
func Main() int {
	// zklock stands in for its companion, zklock-watchdog, where that is
	// not installed beside it (see lockexec.StartWatchdog).
	if lockexec.IsWatchdog() {
		return lockexec.WatchdogMain()
	}
	survivePipes()
	return run(context.Background(), os.Args[1:], os.Stdout, os.Stderr)
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	u := newUI(stdout, stderr)
	root := newCmdRoot(u, completionRequest(args))
	root.SetArgs(args)
	ran := root
	err := unknownCommand(root, args)
	if err == nil {
		ran, err = root.ExecuteContextC(ctx)
	}
	if !u.formatSet {
		// An error before the settings were read (a bad flag, an
		// unknown command), or a command that reads none.
		u.setFormat(earlyLogFormat(args, os.Getenv))
	}
	code := exitCode(err)
	u.finish(err, code, helpFor(ran))
	u.flushStderr()
	return code
}

// completionRequest reports whether args ask the shell's question of
// completion. Only such a request needs the completion functions, and
// registering them walks every flag of every command: a third of the
// instructions of zklock's start otherwise.
func completionRequest(args []string) bool {
	return len(args) > 0 && (args[0] == cobra.ShellCompRequestCmd || args[0] == cobra.ShellCompNoDescRequestCmd)
}

// helpFor is where a usage error of the command that ran is explained: its
// own --help, which lists its flags (zklock --help does not).
func helpFor(c *cobra.Command) string {
	if c == nil {
		return "zklock --help"
	}
	return c.CommandPath() + " --help"
}

// newCmdRoot builds the command tree; with completing, the flags'
// completion functions too.
func newCmdRoot(u *ui, completing bool) *cobra.Command {
	g := &globalOptions{}
	root := &cobra.Command{
		Use:   "zklock",
		Short: "Run a command while holding a lock in ZooKeeper: flock(1) for a fleet",
		Example: `  zklock run --path /locks/backup -- /usr/local/bin/backup.sh
  zklock tryrun --path /locks/deploy -- make deploy
  zklock run --path /locks/db-migrate --timeout 10m -- ./migrate up
  zklock list --path /locks
  zklock holders --path /locks/backup --json
  zklock revoke --path /locks/backup --wait --timeout 1m`,
		Args:          noArgs,
		SilenceErrors: true,
		SilenceUsage:  true,
		RunE: func(c *cobra.Command, _ []string) error {
			return c.Help()
		},
	}
	root.SetOut(u.out)
	root.SetErr(cobraErr{u})
	help := root.HelpFunc()
	root.SetHelpFunc(func(c *cobra.Command, args []string) {
		lazyLong(c)
		help(c, args)
		writeLearnMore(c.OutOrStdout(), c)
	})
	root.SetFlagErrorFunc(flagError)
	root.SuggestionsMinimumDistance = 2
	root.Version = Version()
	root.SetVersionTemplate(versionLine())
	root.CompletionOptions.DisableDefaultCmd = true

	g.addFlags(root.PersistentFlags())
	root.PersistentPreRunE = g.settle(u)

	root.AddCommand(
		newCmdRun(g, u, nil),
		newCmdTryrun(g, u, nil),
		newCmdList(g, u, nil),
		newCmdHolders(g, u, nil),
		newCmdRevoke(g, u, nil),
		newCmdForget(g, u, nil),
		newCmdVersion(u),
		newCmdConfig(g, u),
		newCmdCompletion(root),
		newCmdDoctor(g, u, nil),
		newCmdExporter(g, u, nil),
	)
	root.AddCommand(newCmdTopics()...)
	if completing {
		registerCompletions(root, g)
	}
	return root
}

// settle is every command's pre-run: -v, then the settings from the
// flags, the environment and the configuration files, except for the
// commands that never connect, which a broken file must not stop.
func (g *globalOptions) settle(u *ui) func(*cobra.Command, []string) error {
	return func(c *cobra.Command, _ []string) error {
		u.verbose = g.Verbose
		u.path = pathFlag(c)
		if c.Name() == "run" || c.Name() == "tryrun" {
			u.queueStderr()
		}
		if noSettings[c.Name()] {
			return nil
		}
		lookup := c.Flags().Lookup
		if c.Name() == "config" {
			// zklock config shows run's settings (--flavor) too.
			lookup = withRunFlags(c)
		}
		r, err := resolve(lookup, os.Getenv)
		hideAuthEnv()
		g.SASL.passwordFromEnv()
		if err != nil {
			return err
		}
		g.settings = r
		u.setFormat(g.LogFormat)
		if g.Verbose {
			r.logf(u.logf)
		}
		return nil
	}
}

// longHelps are the long help texts made only when help is shown or the
// command tree is documented, by command path: the lists they hold (exit
// codes, environment) would cost every zklock run a tenth of its start to
// render.
var longHelps = map[string]func() string{
	"zklock":        rootHelp,
	"zklock run":    runLong,
	"zklock tryrun": tryrunLong,
}

// lazyLong gives c its long help, if it is one of longHelps.
func lazyLong(c *cobra.Command) {
	if c.Long != "" {
		return
	}
	if f, ok := longHelps[c.CommandPath()]; ok {
		c.Long = f()
	} else if f := topicLong(c.Name()); f != nil && c.Parent() != nil && !c.Parent().HasParent() {
		c.Long = f()
	}
}

// rootHelp is zklock --help's text above the commands.
func rootHelp() string {
	return `zklock runs a command while holding a lock in Apache ZooKeeper, so that a
cron job, a CI stage or an ops script runs on one machine at a time.

Settings come from the flags, then the environment, then the user's
configuration file (~/.config/zklock/config.toml), then the system's
(/etc/zklock/config.toml), then the built-in defaults; zklock config shows
each setting and where it came from.`
}

// addFlags defines the connection flags every command shares.
func (g *globalOptions) addFlags(pf *pflag.FlagSet) {
	pf.StringVar(&g.Servers, "servers", defaultServers, "ZooKeeper connect string host:port[,host:port...][/chroot] (env "+envServers+")")
	g.SessionTimeout = zkconn.DefaultSessionTimeout
	pf.Var((*sessionTimeoutValue)(&g.SessionTimeout), "session-timeout", "ZooKeeper session timeout to ask for (the server may clamp it)")
	g.ConnectTimeout = zkconn.DefaultConnectTimeout
	pf.Var((*positiveDurationValue)(&g.ConnectTimeout), "connect-timeout", "give up (exit 69) if no session is established within this time")
	pf.StringVar(&g.Auth, "auth", "", "digest credentials as digest:user:password (env "+envAuth+"); every user on the host can read a command line with ps, so prefer --auth-file. Or x509: the --tls-cert's subject owns the nodes zklock creates")
	pf.StringVar(&g.AuthFile, "auth-file", "", "file holding digest:user:password, readable by its owner only, or root-owned and group-readable (env "+envAuthFile+")")
	pf.BoolVar(&g.Protect, "protect", false, "create a missing lock path as a persistent node that only this user may lock, instead of a container the server reaps (see the guide, docs/guide/security.md)")
	pf.BoolVar(&g.TLS, "tls", false, "connect with TLS (to the servers' secureClientPort); implied by the --tls-* flags")
	pf.StringVar(&g.TLSFiles.CA, "tls-ca", "", "PEM file of the CA that signed the servers' certificates (env "+envTLSCA+"; default: the system's roots)")
	pf.StringVar(&g.TLSFiles.Cert, "tls-cert", "", "PEM client certificate, for servers that demand one (env "+envTLSCert+")")
	pf.StringVar(&g.TLSFiles.Key, "tls-key", "", "PEM private key of --tls-cert (env "+envTLSKey+")")
	g.SASL.addFlags(pf)
	pf.BoolVarP(&g.Verbose, "verbose", "v", false, "print progress (connection, queue position, acquisition) on stderr")
	pf.Var(&g.LogFormat, "log-format", "zklock's own lines on stderr: text, or json (one object a line, with the keys of docs/guide/events.md) (env "+envLogFormat+")")
}

// pathFlag is what c's --path names: the first in sorted order (as
// ZKLOCK_PATH) for a command that takes several; "" without one.
func pathFlag(c *cobra.Command) string {
	f := c.Flags().Lookup("path")
	if f == nil {
		return ""
	}
	if sv, ok := f.Value.(pflag.SliceValue); ok {
		return pathOf(sv.GetSlice())
	}
	return f.Value.String()
}

// noSettings are the commands that never connect, so that a broken
// configuration file does not stop them.
var noSettings = map[string]bool{"version": true, "completion": true, "help": true,
	cobra.ShellCompRequestCmd: true, cobra.ShellCompNoDescRequestCmd: true}

// noArgs refuses positional arguments as a usage error.
func noArgs(c *cobra.Command, args []string) error {
	if len(args) > 0 {
		if c.HasSubCommands() {
			return usageErrorf("unknown command %q", args[0])
		}
		return usageErrorf("unexpected argument %q", args[0])
	}
	return nil
}
