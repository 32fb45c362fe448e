package cmd

import (
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

func newCmdConfig(g *globalOptions, u *ui) *cobra.Command {
	return &cobra.Command{
		Use:   "config",
		Short: "Show the effective settings and where each came from",
		Long: `Show each setting zklock would use, and where it came from: a flag, the
environment, a configuration file (with its line) or the built-in default.
Credentials are masked; the contents of --auth-file are never read here.

Settings come from, highest precedence first: the command line, the
environment, the user's file, the system's file, the built-in default. The
user's file is $XDG_CONFIG_HOME/zklock/config.toml or
~/.config/zklock/config.toml; the system's is /etc/zklock/config.toml. Both
are read, key by key: a key the user's file sets overrides the system's,
and every other key of the system's file still applies. A file this user
may not read (another user's HOME) counts as absent; the "# files:" line
names it. $ZKLOCK_CONFIG names one file to read instead of both, which must
be readable.

` + configFileHelp(),
		Example: `  zklock config
  zklock --servers zk9:2181 config
  ZKLOCK_CONFIG=/etc/zklock/ci.toml zklock config`,
		Args: noArgs,
		RunE: func(*cobra.Command, []string) error {
			g.settings.print(u.out)
			return nil
		},
	}
}

// configFileHelp is config --help's paragraph on the file, with every key
// it takes.
func configFileHelp() string {
	return strings.Join(wrap(`A file holds one "key = value" line per setting, keys named as the flags
with "_" for "-" (`+fileKeys()+`). Durations are strings with a unit, such as
"10s"; tls and progress are true or false. Any of tls_ca, tls_cert and
tls_key turns TLS on, and the table then shows tls as implied by it. A
syntax error, an unknown key or a bad value exits 64, naming the file and
the line.`, helpColumns), "\n")
}

// withRunFlags looks a flag up among c's and then run's, so that zklock
// config can show the settings only run takes (--flavor).
func withRunFlags(c *cobra.Command) func(string) *pflag.Flag {
	run, _, err := c.Root().Find([]string{"run"})
	return func(name string) *pflag.Flag {
		if f := c.Flags().Lookup(name); f != nil || err != nil {
			return f
		}
		return run.Flags().Lookup(name)
	}
}
