package e2e

import (
	"bufio"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestWatchdogKilledIsReported: an operator kills the watchdog while the
// command runs. zklock says so at once, in one warning, while the command
// still runs (the command waits for the warning before it ends), and the
// run ends as the command does: the lock was never lost.
func TestWatchdogKilledIsReported(t *testing.T) {
	dir := t.TempDir()
	// zklock's children are the command and its watchdog: kill the other.
	c := zklock(t, "run", "--path", lockPath(t), "--", "sh", "-c", `
		for p in $(ps -o pid= --ppid "$PPID"); do [ "$p" != "$$" ] && kill -KILL "$p"; done
		i=0; while [ ! -e "$D/warned" ] && [ $i -lt 2000 ]; do sleep 0.01; i=$((i+1)); done
		[ -e "$D/warned" ]`)
	c.Env = append(c.Env, "D="+dir)
	stderr, err := c.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	var (
		wg   sync.WaitGroup
		text strings.Builder
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			text.WriteString(sc.Text() + "\n")
			if strings.Contains(sc.Text(), "the watchdog (pid ") {
				_ = os.WriteFile(filepath.Join(dir, "warned"), nil, 0o644)
			}
		}
		_, _ = io.Copy(io.Discard, stderr)
	}()
	timer := time.AfterFunc(60*time.Second, func() { _ = c.Process.Kill() })
	defer timer.Stop()
	wg.Wait()
	err = c.Wait()
	out := text.String()
	if err != nil {
		t.Fatalf("exit: %v (the command did not see the warning in time, or the run failed); stderr:\n%s", err, out)
	}
	if n := strings.Count(out, "the watchdog (pid "); n != 1 || !strings.Contains(out, "has ended") {
		t.Errorf("%d warnings about the watchdog, want 1 saying it ended; stderr:\n%s", n, out)
	}
}
