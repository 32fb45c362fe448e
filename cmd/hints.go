package cmd

import (
	"errors"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// flockHints say what zklock does instead of flock(1)'s options, by short
// letter; flockLong maps flock's long names to them.
var (
	flockHints = map[byte]string{
		'n': "flock -n is zklock tryrun",
		'w': "flock -w N is --timeout Ns (with a unit: 30s, 5m)",
		's': "flock -s is --shared",
		'x': "flock -x is the default: run takes an exclusive lock",
		'c': "flock -c CMD is -- sh -c CMD",
		'o': "flock -o has no counterpart (the command never inherits the lock); to bound how long it runs, use --max-runtime",
	}
	flockLong = map[string]byte{
		"nonblock": 'n', "nb": 'n', "no-fork": 'n', "wait": 'w', "exclusive": 'x',
		"command": 'c', "close": 'o',
	}
)

// tryrunWaits is the hint for a wait asked of tryrun, which never waits.
const tryrunWaits = "tryrun never waits: to wait at most D, use zklock run --timeout D"

// flagError is every command's flag error: a usage error, with a hint for
// the options flock(1) users reach for, and for a flag that belongs to
// another command.
func flagError(c *cobra.Command, err error) error {
	var ne *pflag.NotExistError
	if errors.As(err, &ne) && ne.GetSpecifiedName() != "" {
		name := ne.GetSpecifiedName()
		short := ne.GetSpecifiedShortnames() != ""
		letter, ok := flockLong[name]
		if short {
			letter, ok = name[0], true
		}
		switch {
		case c.Name() == "tryrun" && (name == "timeout" || ok && letter == 'w'):
			return usageErrorf("%v; %s", err, tryrunWaits)
		case ok && flockHints[letter] != "":
			return usageErrorf("%v; %s", err, flockHints[letter])
		case !short:
			if others := commandsWithFlag(c, name); len(others) > 0 {
				return usageErrorf("%v; it is a flag of %s", err, strings.Join(others, " and "))
			}
		}
	}
	// pflag words a bad boolean as its parser does (strconv.ParseBool:
	// parsing "yes": invalid syntax), without wrapping the parser's error.
	if i := strings.Index(err.Error(), ": strconv.ParseBool: "); i >= 0 {
		return usageErrorf("%s: %s", err.Error()[:i], notBoolean)
	}
	return &UsageError{Err: err}
}

// commandsWithFlag names the other commands that take --name.
func commandsWithFlag(c *cobra.Command, name string) []string {
	var have []string
	for _, o := range c.Root().Commands() {
		if o != c && o.Flags().Lookup(name) != nil {
			have = append(have, o.CommandPath())
		}
	}
	return have
}

// unknownCommand refuses a first argument that names no command, before
// any flag is parsed: otherwise `zklock rnu --path P` would complain about
// --path, which the root command does not have, instead of the typo.
func unknownCommand(root *cobra.Command, args []string) error {
	name, at := firstArgAt(root.PersistentFlags(), args)
	if name == "" {
		// `zklock -- run …`: after --, nothing is zklock's command.
		if i := slices.Index(args, "--"); i >= 0 && i+1 < len(args) && isCommand(root, args[i+1]) {
			return usageErrorf("%q after -- is not read as a command: give it first (zklock %s … -- CMD)", args[i+1], args[i+1])
		}
		return nil
	}
	if name == cobra.ShellCompRequestCmd || name == cobra.ShellCompNoDescRequestCmd {
		return nil
	}
	what := "command"
	if name == "help" {
		// cobra prints zklock --help and exits 0 for a topic it does not
		// know: a typo would pass for success.
		name, what = firstArg(root.PersistentFlags(), args[at+1:]), "help topic"
		if name == "" {
			return nil
		}
	}
	if isCommand(root, name) {
		return nil
	}
	// `zklock --path /x run …`: a command's own flag before the command
	// takes the flag's value for the command.
	if what == "command" && at > 0 && strings.HasPrefix(args[at-1], "-") {
		if later := firstArg(root.PersistentFlags(), args[at+1:]); isCommand(root, later) {
			return usageErrorf("%s goes after the command: zklock %s %s …", args[at-1], later, args[at-1])
		}
	}
	if s := root.SuggestionsFor(name); len(s) > 0 {
		return usageErrorf("unknown %s %q; did you mean %s?", what, name, strings.Join(s, " or "))
	}
	return usageErrorf("unknown %s %q", what, name)
}

// isCommand reports whether name is one of root's commands.
func isCommand(root *cobra.Command, name string) bool {
	for _, c := range root.Commands() {
		if c.Name() == name || c.HasAlias(name) {
			return true
		}
	}
	return false
}

// firstArg is the first argument that is neither a flag nor a flag's
// value, or "" when there is none before "--".
func firstArg(fs *pflag.FlagSet, args []string) string {
	a, _ := firstArgAt(fs, args)
	return a
}

// firstArgAt is firstArg and its index in args (-1 when there is none).
func firstArgAt(fs *pflag.FlagSet, args []string) (string, int) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			return "", -1
		case !strings.HasPrefix(a, "-") || a == "-":
			return a, i
		case strings.Contains(a, "="):
			continue
		}
		var f *pflag.Flag
		if strings.HasPrefix(a, "--") {
			f = fs.Lookup(a[2:])
		} else if len(a) == 2 {
			f = fs.ShorthandLookup(a[1:])
		}
		if f != nil && f.NoOptDefVal == "" {
			i++ // the flag's value
		}
	}
	return "", -1
}
