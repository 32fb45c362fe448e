package main

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// The documentation is README.md and the pages under docs/. These tests
// keep it honest about itself and about the code: every relative link
// leads somewhere, every page can be reached from the README, and the
// package map in docs/architecture.md is the import graph.

// docPages returns README.md and every Markdown page under docs/.
func docPages(t *testing.T) []string {
	t.Helper()
	pages := []string{"README.md"}
	err := filepath.WalkDir("docs", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".md") {
			pages = append(pages, filepath.ToSlash(p))
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return pages
}

var (
	// linkRe finds inline Markdown links: [text](target).
	linkRe = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	// codeSpanRe finds inline code, whose brackets are no links.
	codeSpanRe = regexp.MustCompile("`[^`]*`")
	headingRe  = regexp.MustCompile(`^#{1,6} (.*)$`)
)

// prose returns a page's lines outside fenced code blocks.
func prose(text string) []string {
	var out []string
	fenced := false
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			fenced = !fenced
			continue
		}
		if !fenced {
			out = append(out, l)
		}
	}
	return out
}

// links returns the targets of a page's links, outside code.
func links(text string) []string {
	var out []string
	for _, l := range prose(text) {
		for _, m := range linkRe.FindAllStringSubmatch(codeSpanRe.ReplaceAllString(l, ""), -1) {
			out = append(out, m[1])
		}
	}
	return out
}

// anchor is GitHub's anchor for a heading: lower case, spaces to hyphens,
// every other character but letters, digits, hyphens and underscores gone.
func anchor(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || ('a' <= r && r <= 'z') || ('0' <= r && r <= '9') || r > 0x7f:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// anchors returns the anchors of a page's headings.
func anchors(text string) map[string]bool {
	out := map[string]bool{}
	for _, l := range prose(text) {
		if m := headingRe.FindStringSubmatch(l); m != nil {
			a := anchor(m[1])
			for n := 1; out[a]; n++ {
				a = anchor(m[1]) + "-" + string(rune('0'+n))
			}
			out[a] = true
		}
	}
	return out
}

// TestDocLinks: every relative link in README.md and docs/ names a file
// that exists and, with #anchor, a heading of that file; and every page of
// docs/ can be reached from the README by following links.
func TestDocLinks(t *testing.T) {
	pages := docPages(t)
	text := map[string]string{}
	for _, p := range pages {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		text[p] = string(b)
	}
	linked := map[string][]string{} // page -> pages it links to
	for _, p := range pages {
		for _, target := range links(text[p]) {
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			file, frag, _ := strings.Cut(target, "#")
			dest := p
			if file != "" {
				dest = path.Clean(path.Join(path.Dir(p), file))
			}
			if _, err := os.Stat(dest); err != nil {
				t.Errorf("%s: link %s: %s does not exist", p, target, dest)
				continue
			}
			if strings.HasSuffix(dest, ".md") {
				linked[p] = append(linked[p], dest)
			}
			if frag == "" {
				continue
			}
			body, ok := text[dest]
			if !ok {
				b, err := os.ReadFile(dest)
				if err != nil {
					t.Errorf("%s: link %s: %v", p, target, err)
					continue
				}
				body = string(b)
			}
			if !anchors(body)[frag] {
				t.Errorf("%s: link %s: %s has no heading #%s", p, target, dest, frag)
			}
		}
	}
	reached := map[string]bool{"README.md": true}
	for todo := []string{"README.md"}; len(todo) > 0; {
		p := todo[0]
		todo = todo[1:]
		for _, q := range linked[p] {
			if !reached[q] {
				reached[q] = true
				todo = append(todo, q)
			}
		}
	}
	for _, p := range pages {
		if !reached[p] {
			t.Errorf("%s cannot be reached from README.md", p)
		}
	}
}

// TestAnchor: headings become the anchors GitHub gives them.
func TestAnchor(t *testing.T) {
	for heading, want := range map[string]string{
		"Exit codes":           "exit-codes",
		"Coming from flock(1)": "coming-from-flock1",
		"How the lock works, and when it is lost": "how-the-lock-works-and-when-it-is-lost",
		"`list` and `holders`":                    "list-and-holders",
		"The life of one `zklock run`":            "the-life-of-one-zklock-run",
	} {
		if got := anchor(heading); got != want {
			t.Errorf("anchor(%q) = %q, want %q", heading, got, want)
		}
	}
}

const module = "github.com/zklock/zklock"

// imports returns the packages of this module that the Go files in dir
// import, tests left out, for every platform.
func imports(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), filepath.Join(dir, name), nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			p := strings.Trim(imp.Path.Value, `"`)
			if rest, ok := strings.CutPrefix(p, module+"/"); ok {
				seen[rest] = true
			}
		}
	}
	out := make([]string, 0, len(seen))
	for p := range seen {
		out = append(out, p)
	}
	slices.Sort(out)
	return out
}

// packageDirs returns every directory of the module that holds Go files,
// as the map names them ("." for the root).
func packageDirs(t *testing.T) []string {
	t.Helper()
	var dirs []string
	err := filepath.WalkDir(".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && p != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(p, ".go") {
			dir := filepath.ToSlash(filepath.Dir(p))
			if !slices.Contains(dirs, dir) {
				dirs = append(dirs, dir)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return dirs
}

// mapRowRe is a row of the package map: | `pkg` | what | `a`, `b` |.
var mapRowRe = regexp.MustCompile("^\\| `([^`]+)` \\|[^|]*\\|([^|]*)\\|$")

// TestArchitectureMap: the package map in docs/architecture.md names every
// package of the module once, and says what each imports of the module,
// exactly as the source does.
func TestArchitectureMap(t *testing.T) {
	b, err := os.ReadFile("docs/architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	documented := map[string][]string{}
	for _, l := range strings.Split(string(b), "\n") {
		m := mapRowRe.FindStringSubmatch(strings.TrimSpace(l))
		if m == nil {
			continue
		}
		if _, dup := documented[m[1]]; dup {
			t.Errorf("the map names %s twice", m[1])
		}
		imps := []string{}
		for _, c := range codeSpanRe.FindAllString(m[2], -1) {
			imps = append(imps, strings.Trim(c, "`"))
		}
		slices.Sort(imps)
		documented[m[1]] = imps
	}
	for _, dir := range packageDirs(t) {
		want, ok := documented[dir]
		if !ok {
			t.Errorf("docs/architecture.md: the package map lacks %s", dir)
			continue
		}
		delete(documented, dir)
		if got := imports(t, dir); !slices.Equal(got, want) {
			t.Errorf("docs/architecture.md: %s imports %v, the map says %v", dir, got, want)
		}
	}
	for dir := range documented {
		t.Errorf("docs/architecture.md: the map names %s, which holds no Go package", dir)
	}
}

// fencedBlocks returns the contents of a page's fenced code blocks.
func fencedBlocks(text string) []string {
	var out []string
	var cur []string
	fenced := false
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			if fenced {
				out = append(out, strings.Join(cur, "\n")+"\n")
				cur = nil
			}
			fenced = !fenced
			continue
		}
		if fenced {
			cur = append(cur, l)
		}
	}
	return out
}

// TestDocSamples: the sample configuration and JAAS files in testdata/,
// which the tests of cmd and zkconn/sasl read, are the samples the guide
// shows, word for word, so that a sample a user copies is one that works.
func TestDocSamples(t *testing.T) {
	for file, page := range map[string]string{
		"testdata/config/config.toml": "docs/guide/configuration.md",
		"testdata/jaas/digest.jaas":   "docs/guide/connecting.md",
		"testdata/jaas/keytab.jaas":   "docs/guide/connecting.md",
	} {
		sample, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		doc, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Contains(fencedBlocks(string(doc)), string(sample)) {
			t.Errorf("%s does not show %s as it is:\n%s", page, file, sample)
		}
	}
}
