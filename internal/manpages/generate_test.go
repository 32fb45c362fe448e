package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestPagesRender generates the pages and has man-db render them: each page
// must format without a groff warning and carry the flags of its command.
func TestPagesRender(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("ZKLOCK_SERVERS", "zk-of-the-build-host:2181")
	if err := generate(dir); err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{
		"zklock.1":        {"zklock - Run a command while holding a lock", "--servers", "--session-timeout", "--auth-file", "zklock-run(1)", "zklock-forget(1)", "127.0.0.1:2181"},
		"zklock-run.1":    {"zklock-run - Wait for the lock", "--path", "--timeout", "--on-lost", "--max-runtime", "--servers", "Exit codes"},
		"zklock-forget.1": {"zklock-forget - Forget the last success recorded by --once-per", "--path", "first in sorted order", "--servers"},
	}
	for page, needles := range want {
		file := filepath.Join(dir, page)
		text := render(t, file)
		for _, n := range needles {
			if !strings.Contains(text, n) {
				t.Errorf("%s rendered by man lacks %q", page, n)
			}
		}
		if strings.Contains(text, "zk-of-the-build-host") {
			t.Errorf("%s shows the build host's ZKLOCK_SERVERS as a default", page)
		}
		var stderr bytes.Buffer
		groff := exec.Command("groff", "-man", "-ww", "-z", file)
		groff.Stderr = &stderr
		if err := groff.Run(); err != nil || stderr.Len() > 0 {
			t.Errorf("groff -ww on %s: %v: %s", page, err, stderr.String())
		}
	}
	pages, _ := filepath.Glob(filepath.Join(dir, "*.1"))
	if len(pages) < 6 {
		t.Errorf("only %d pages: %v", len(pages), pages)
	}
}

// render formats a page as `man -l` does for a reader, without a pager.
func render(t *testing.T, file string) string {
	t.Helper()
	c := exec.Command("man", "-l", file)
	c.Env = append(os.Environ(), "MANPAGER=cat", "PAGER=cat", "MANWIDTH=120", "MAN_KEEP_FORMATTING=0")
	out, err := c.Output()
	if err != nil {
		t.Fatalf("man -l %s: %v", file, err)
	}
	// Strip overstrike bold/underline, should man keep them.
	var b strings.Builder
	for i := 0; i < len(out); i++ {
		if i+1 < len(out) && out[i+1] == '\b' {
			i++
			continue
		}
		b.WriteByte(out[i])
	}
	return b.String()
}
