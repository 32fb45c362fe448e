package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zklock/zklock/internal/recipe"
	"github.com/zklock/zklock/internal/testkit/zktest"
)

// TestMixedRecipesRefused: a path held as a semaphore refuses a plain or a
// shared lock, and a path held as a lock refuses a semaphore, with exit 64,
// a hint, and no node left behind by the refused side.
func TestMixedRecipesRefused(t *testing.T) {
	conn := rawZK(t)
	for _, tc := range []struct {
		name         string
		holder, late []string
		hint         string
	}{
		{"lock after semaphore", []string{"--limit", "2"}, nil, "use --limit 2 to join it"},
		{"read lock after semaphore", []string{"--limit", "1"}, []string{"--shared"}, "use --limit 1 to join it"},
		{"semaphore after lock", nil, []string{"--limit", "1"}, "drop --limit"},
		{"semaphore after read lock", []string{"--shared"}, []string{"--limit", "3"}, "drop --limit"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assertRefusedBeside(t, conn, tc.holder, tc.late, "not as", "the other recipe", tc.hint)
		})
	}
}

// assertRefusedBeside runs a holder with holderArgs, then a run with
// lateArgs on the same path, which must be refused with exit 64 and one
// line saying what and hint, leaving no node behind; the holder then
// finishes undisturbed and the path is gone.
func assertRefusedBeside(t *testing.T, conn *zk.Conn, holderArgs, lateArgs []string, what, who, hint string) {
	t.Helper()
	path, dir := lockPath(t), t.TempDir()
	holder, holderErr := startGated(t, dir, "h", append(append([]string{"run"}, holderArgs...), "--path", path)...)
	zktest.Eventually(t, 10*time.Second, "the holder's command", func() bool { return fileExists(filepath.Join(dir, "h.started")) })
	before := nodesUnder(t, path)
	late, lateErr := startGated(t, dir, "l", append(append([]string{"run"}, lateArgs...), "--path", path)...)
	wantExit(t, late, lateErr, 64, who)
	if msg := lateErr.String(); !strings.Contains(msg, what) || !strings.Contains(msg, hint) || strings.Count(msg, "\n") != 1 {
		t.Errorf("stderr %q, want one line with the hint %q", msg, hint)
	}
	if after := nodesUnder(t, path); after != before {
		t.Errorf("nodes under %s: %s before, %s after the refused run", path, before, after)
	}
	touch(t, filepath.Join(dir, "h"))
	wantExit(t, holder, holderErr, 0, "holder")
	assertGone(t, conn, path)
}

// nodesUnder lists every contender node below path, for comparing before
// and after (empty containers come and go as the server reaps them).
func nodesUnder(t *testing.T, path string) string {
	t.Helper()
	conn := rawZK(t)
	var out []string
	var walk func(p string)
	walk = func(p string) {
		ch, _, err := conn.Children(p)
		if err != nil {
			return
		}
		for _, c := range ch {
			if _, ok := recipe.ParseSeq(c); ok {
				out = append(out, p+"/"+c)
			}
			walk(p + "/" + c)
		}
	}
	walk(path)
	return strings.Join(out, " ")
}

// TestMixedRecipesRace starts a semaphore contender and a lock contender
// on one path at the same moment, round after round, each command inside
// the kernel overlap detector: never do both commands run at once, and in
// every round at least one is refused (64). A command that runs stays
// until the other contender has exited (10s at most), so the two always
// overlap in time, however they are scheduled: the other must then have
// been refused, or have run beside it and met the detector.
func TestMixedRecipesRace(t *testing.T) {
	const rounds = 20
	conn := rawZK(t)
	path, dir := lockPath(t), t.TempDir()
	const script = `i=0; while [ ! -e "$D/exited.$ROUND.$OTHER" ] && [ $i -lt 500 ]; do sleep 0.02; i=$((i+1)); done`
	for r := 0; r < rounds; r++ {
		flags := [][]string{{"--limit", "1"}, nil}
		if r%3 == 2 {
			flags[1] = []string{"--shared"}
		}
		if r%2 == 1 {
			flags[0], flags[1] = flags[1], flags[0]
		}
		var stderrs []*syncBuffer
		var exits []chan int
		for i, f := range flags {
			c := zklock(t, append(append(append([]string{"run"}, f...), "--path", path, "--"), guarded(dir, script)...)...)
			c.Env = append(c.Env, "D="+dir, fmt.Sprintf("ROUND=%d", r), fmt.Sprintf("OTHER=%d", 1-i))
			stderr := &syncBuffer{}
			c.Stderr = stderr
			if err := c.Start(); err != nil {
				t.Fatal(err)
			}
			stderrs = append(stderrs, stderr)
			exit := make(chan int, 1)
			exits = append(exits, exit)
			go func() {
				code, err := zktest.ExitCode(c.Wait())
				if err != nil {
					code = -1
				}
				os.WriteFile(filepath.Join(dir, fmt.Sprintf("exited.%d.%d", r, i)), nil, 0o644)
				exit <- code
			}()
		}
		refused := 0
		for i, exit := range exits {
			switch code := <-exit; code {
			case 0:
			case 64:
				refused++
			case overlapExit:
				t.Fatalf("round %d: OVERLAP: a %v contender ran beside the other recipe", r, flags[i])
			default:
				t.Fatalf("round %d: %v exit %d: %s", r, flags[i], code, stderrs[i])
			}
		}
		if refused == 0 {
			t.Errorf("round %d: neither %v nor %v was refused, though they overlapped", r, flags[0], flags[1])
		}
	}
	assertGone(t, conn, path)
}
