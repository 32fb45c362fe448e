package main

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestHarnessApart: the product never imports the test harness. What a
// release ships must not link a ZooKeeper launcher or a fault proxy, and
// the package list reads as the architecture only while the harness stays
// under internal/testkit.
func TestHarnessApart(t *testing.T) {
	const harness = "github.com/zklock/zklock/internal/testkit"
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch path {
			case ".git", "internal/testkit", "e2e", "interop", "testdata":
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if p == harness || strings.HasPrefix(p, harness+"/") {
				t.Errorf("%s imports %s: the product must not depend on the test harness", path, p)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
