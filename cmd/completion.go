package cmd

import (
	"context"
	"io"
	"os"
	"path"
	"strings"
	"time"
	"unicode"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/zklock/zklock/internal/inspect"
	"github.com/zklock/zklock/zkconn"
)

// choices is a flag value with a fixed set of values. Completion offers
// them for every flag whose value has them, so a new typed flag completes
// with no more code.
type choices interface {
	Choices() []string
}

// completionTimeout bounds the whole completion of a --path, connect
// included: a shell waits for it while the user waits for the shell.
const completionTimeout = 2 * time.Second

func newCmdCompletion(root *cobra.Command) *cobra.Command {
	return &cobra.Command{
		Use:   "completion bash|zsh|fish",
		Short: "Print the shell completion script",
		Long: `Print the completion script for bash, zsh or fish. It completes commands,
flags, the values of --flavor, --on-lost, --on-revoke and --sasl, lock
paths for --path and, for revoke, the contenders at --path for --node, read
from the servers (nothing if they do not answer within ` + completionTimeout.String() + `).`,
		Example: `  source <(zklock completion bash)          # this shell; or, for every session:
  zklock completion bash > /etc/bash_completion.d/zklock
  zklock completion zsh > "${fpath[1]}/_zklock"
  zklock completion fish > ~/.config/fish/completions/zklock.fish`,
		ValidArgs: []string{"bash", "zsh", "fish"},
		Args: func(c *cobra.Command, args []string) error {
			if len(args) != 1 || (args[0] != "bash" && args[0] != "zsh" && args[0] != "fish") {
				return usageErrorf("name one shell: zklock completion bash, zsh or fish")
			}
			return nil
		},
		RunE: func(c *cobra.Command, args []string) error {
			out := c.OutOrStdout()
			switch args[0] {
			case "bash":
				return root.GenBashCompletionV2(out, true)
			case "zsh":
				return root.GenZshCompletion(out)
			default:
				return root.GenFishCompletion(out, true)
			}
		},
	}
}

// registerCompletions gives every flag with choices its values, and every
// --path the server's paths, on c and all its subcommands.
func registerCompletions(c *cobra.Command, g *globalOptions) {
	register := func(fs *pflag.FlagSet) {
		fs.VisitAll(func(f *pflag.Flag) {
			if ch, ok := f.Value.(choices); ok {
				values := ch.Choices()
				_ = c.RegisterFlagCompletionFunc(f.Name, cobra.FixedCompletions(values, cobra.ShellCompDirectiveNoFileComp))
			}
		})
	}
	register(c.LocalNonPersistentFlags())
	register(c.PersistentFlags())
	if c.LocalNonPersistentFlags().Lookup("path") != nil {
		_ = c.RegisterFlagCompletionFunc("path", completePath(g))
	}
	if c.LocalNonPersistentFlags().Lookup("node") != nil {
		_ = c.RegisterFlagCompletionFunc("node", completeNode(g))
	}
	for _, sub := range c.Commands() {
		registerCompletions(sub, g)
	}
}

// completeNode completes --node from the contenders at --path, as list
// shows them. Without a --path there is nothing to offer; nor, as for
// completePath, when anything fails.
func completeNode(g *globalOptions) cobra.CompletionFunc {
	return func(c *cobra.Command, _ []string, typed string) ([]cobra.Completion, cobra.ShellCompDirective) {
		const none = cobra.ShellCompDirectiveNoFileComp
		p, err := c.Flags().GetString("path")
		if err != nil || p == "" {
			return nil, none
		}
		conn, ok := completionConn(c, g)
		if !ok {
			return nil, none
		}
		ctx, cancel := context.WithTimeout(context.Background(), completionTimeout)
		defer cancel()
		names, err := inspect.ContendersAt(ctx, conn, p)
		if err != nil {
			return nil, none
		}
		var offer []cobra.Completion
		for _, n := range names {
			if strings.HasPrefix(n, typed) && shellWord(n) {
				offer = append(offer, n)
			}
		}
		return offer, none
	}
}

// completionConn is the connection a completion uses: the settings the
// command line, the environment and the files give, with a connect bound
// short enough for a shell waiting on a Tab.
func completionConn(c *cobra.Command, g *globalOptions) (zkconn.Options, bool) {
	if _, err := resolve(c.Flags().Lookup, os.Getenv); err != nil {
		return zkconn.Options{}, false
	}
	conn, err := g.connOptions(newUI(io.Discard, io.Discard))
	if err != nil {
		return zkconn.Options{}, false
	}
	conn.ConnectTimeout = min(conn.ConnectTimeout, completionTimeout)
	return conn, true
}

// completePath completes a lock path from the children of the node typed
// so far, with the settings the command line, the environment and the
// files give. An unreachable server, or anything else that fails, offers
// nothing rather than an error: a shell has no good place to show one.
func completePath(g *globalOptions) cobra.CompletionFunc {
	return func(c *cobra.Command, _ []string, typed string) ([]cobra.Completion, cobra.ShellCompDirective) {
		const none = cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
		if typed == "" {
			typed = "/"
		}
		if !strings.HasPrefix(typed, "/") {
			return nil, none
		}
		parent, prefix := path.Split(typed)
		parent = path.Clean(parent)
		conn, ok := completionConn(c, g)
		if !ok {
			return nil, none
		}
		ctx, cancel := context.WithTimeout(context.Background(), completionTimeout)
		defer cancel()
		paths, err := inspect.PathsUnder(ctx, conn, parent, prefix)
		if err != nil {
			return nil, none
		}
		safe := paths[:0]
		for _, p := range paths {
			if shellWord(p) {
				safe = append(safe, p)
			}
		}
		return safe, none
	}
}

// shellWord reports whether s, a name another client chose, may be offered
// as a completion. The shell puts what is offered onto the command line as
// it is, unquoted (bash's completion script does not quote it): a name
// with a space would become two arguments, and one with $(...) or `...`
// would run that command when the line is entered. One that holds a
// character a terminal obeys instead of showing (a bidi override, a line
// separator: the server allows them) would show as something else than it
// is. So only names that are one plain shell word are offered: letters,
// digits and _@%+=:,./- (every recipe's own names are); others can still
// be typed, quoted.
func shellWord(s string) bool {
	if strings.HasPrefix(s, "~") {
		return false
	}
	for _, r := range s {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) && !strings.ContainsRune("_@%+=:,./-", r) {
			return false
		}
	}
	return true
}
