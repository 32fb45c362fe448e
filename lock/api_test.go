package lock

import (
	"bytes"
	"flag"
	"go/ast"
	"go/doc"
	"go/format"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/api.golden from the package's exported API")

// TestAPIGolden keeps the exported API in testdata/api.golden, so that
// any change to what users may depend on is a diff someone reviews. The
// file holds declarations only: a comment's wording is not the API.
func TestAPIGolden(t *testing.T) {
	got := exportedAPI(t)
	const golden = "testdata/api.golden"
	if *update {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("the exported API differs from %s; if the change is meant, run\n\tgo test ./lock -run TestAPIGolden -update\nand review the diff. Now:\n%s", golden, got)
	}
}

// exportedAPI renders the package's exported declarations, without
// comments, in go/doc's order: constants, variables, functions, then each
// type with its constructors and methods.
func exportedAPI(t *testing.T) []byte {
	t.Helper()
	fset := token.NewFileSet()
	names, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	var files []*ast.File
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0) // no comments: only declarations are compared
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	p, err := doc.NewFromFiles(fset, files, "github.com/zklock/zklock/lock")
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	decl := func(n ast.Node) {
		if f, ok := n.(*ast.FuncDecl); ok {
			f.Body = nil
		}
		if err := format.Node(&b, fset, n); err != nil {
			t.Fatal(err)
		}
		b.WriteString("\n")
	}
	values := func(vs []*doc.Value) {
		for _, v := range vs {
			decl(v.Decl)
		}
	}
	values(p.Consts)
	values(p.Vars)
	for _, f := range p.Funcs {
		decl(f.Decl)
	}
	for _, ty := range p.Types {
		b.WriteString("\n")
		decl(ty.Decl)
		values(ty.Consts)
		values(ty.Vars)
		for _, f := range slices.Concat(ty.Funcs, ty.Methods) {
			decl(f.Decl)
		}
	}
	return b.Bytes()
}

// TestExamplesCopyable keeps the examples a program an outside user can
// copy: they may import no internal package, which such a user cannot.
func TestExamplesCopyable(t *testing.T) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "example_test.go", nil, parser.ImportsOnly)
	if err != nil {
		t.Fatal(err)
	}
	if f.Name.Name != "lock_test" {
		t.Errorf("example_test.go is package %s, want lock_test", f.Name.Name)
	}
	for _, im := range f.Imports {
		if strings.Contains(im.Path.Value, "/internal/") {
			t.Errorf("example_test.go imports %s", im.Path.Value)
		}
	}
}
