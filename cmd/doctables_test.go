package cmd

import (
	"flag"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

var update = flag.Bool("update", false, "rewrite the generated tables in the documentation")

type docTable struct {
	file, name string
	render     func() string
}

// docTables are the tables in the documentation that are rendered from the
// code: each sits between a start line naming it and endMark.
var docTables = []docTable{
	{"../README.md", "exit codes", func() string {
		return markdownTable([2]string{"code", "meaning"}, exitCodes, false)
	}},
	{"../docs/guide/run.md", "the command's environment", func() string {
		return markdownTable([2]string{"variable", "value"}, commandVariables(), true)
	}},
	{"../docs/guide/configuration.md", "environment variables", func() string {
		return markdownTable([2]string{"variable", "meaning"}, environment, true)
	}},
	{"../docs/guide/events.md", "events", func() string {
		return markdownTable([2]string{"event", "keys: when"}, eventReferences(), false)
	}},
}

// allDocTables are docTables and the guides' tables of flags, rendered
// from the command tree.
func allDocTables() []docTable {
	root := CommandTree()
	all := slices.Clone(docTables)
	for _, t := range guideTables {
		c, _, err := root.Find([]string{t.command})
		if err != nil {
			panic(err)
		}
		all = append(all, docTable{"../docs/guide/" + t.guide, t.command + "'s flags", func() string { return t.markdown(c) }})
	}
	return all
}

const endMark = "<!-- end of generated table -->"

func startMark(name string) string {
	return "<!-- generated table: " + name + " (go test ./cmd -run TestDocTables -update) -->"
}

// TestDocTables: the exit codes, the environment variables and the
// guides' flags are documented in one place, the code, and the
// documentation's tables are rendered from it. With -update the tables
// are rewritten.
func TestDocTables(t *testing.T) {
	for _, d := range allDocTables() {
		b, err := os.ReadFile(d.file)
		if err != nil {
			t.Fatal(err)
		}
		text := string(b)
		start := strings.Index(text, startMark(d.name))
		end := strings.Index(text, endMark)
		for end >= 0 && end < start {
			next := strings.Index(text[end+1:], endMark)
			if next < 0 {
				end = -1
				break
			}
			end += 1 + next
		}
		if start < 0 || end < 0 {
			t.Errorf("%s: no %q ... %q around the table of %s", d.file, startMark(d.name), endMark, d.name)
			continue
		}
		head := start + len(startMark(d.name)) + 1
		want := d.render()
		if text[head:end] == want {
			continue
		}
		if !*update {
			t.Errorf("%s: the table of %s is not the code's; run go test ./cmd -run TestDocTables -update\nwant:\n%s", d.file, d.name, want)
			continue
		}
		if err := os.WriteFile(d.file, []byte(text[:head]+want+text[end:]), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestExitCodesDocumented: every exit code zklock itself chooses has a row.
func TestExitCodesDocumented(t *testing.T) {
	var names []string
	for _, r := range exitCodes {
		names = append(names, r.name)
	}
	for _, code := range []int{ExitUsage, ExitUnavailable, ExitBusy, ExitLockLost, ExitPermission, ExitMaxRuntime, ExitCannotExec, ExitNotFound} {
		if !slices.Contains(names, strconv.Itoa(code)) {
			t.Errorf("exit code %d is not documented in exitCodes", code)
		}
	}
}

// TestEnvironmentDocumented: every variable a setting is read from has a
// row in environment.
func TestEnvironmentDocumented(t *testing.T) {
	var names []string
	for _, r := range environment {
		names = append(names, strings.Split(r.name, ", ")...)
	}
	for _, s := range settings {
		if s.env != "" && !slices.Contains(names, s.env) {
			t.Errorf("%s (for --%s) is not documented in environment", s.env, s.flag)
		}
	}
}

// TestGuideFlagsComplete: a guide's table of a command's flags names every
// flag the command has (but --help), once, and no flag it lacks.
func TestGuideFlagsComplete(t *testing.T) {
	root := CommandTree()
	for _, g := range guideTables {
		c, _, err := root.Find([]string{g.command})
		if err != nil {
			t.Fatal(err)
		}
		seen := map[string]int{}
		for _, r := range g.rows {
			for _, n := range r.flags {
				seen[n]++
				if g.flag(c, n) == nil {
					t.Errorf("docs/guide/%s: zklock %s has no flag --%s", g.guide, g.command, n)
				}
			}
		}
		c.LocalFlags().VisitAll(func(f *pflag.Flag) {
			if f.Hidden || f.Name == "help" {
				return
			}
			if seen[f.Name] != 1 {
				t.Errorf("docs/guide/%s: --%s of zklock %s is in %d rows of its table, want 1", g.guide, f.Name, g.command, seen[f.Name])
			}
		})
	}
}
