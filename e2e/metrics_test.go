package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/zklock/zklock/internal/testkit/zktest"
)

// promtool checks a metrics file as Prometheus would parse it, with its
// lint rules (Debian's prometheus package, from scripts/install-deps.sh).
func promtool(t *testing.T, file string) {
	t.Helper()
	c := exec.Command("promtool", "check", "metrics")
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	c.Stdin = f
	if out, err := c.CombinedOutput(); err != nil || len(out) > 0 {
		t.Errorf("promtool check metrics %s: %v: %s", file, err, out)
	}
}

// runsTotal is the series of a job's runs with outcome, as node_exporter
// serves it (labels sorted by name).
func runsTotal(path, outcome string) string {
	return fmt.Sprintf(`zklock_runs_total{outcome=%q,path=%q}`, outcome, path)
}

// TestMetricsFile: zklock runs of several jobs, ending together, write
// one --metrics-file and lose no increment; the last success stays when a
// later run fails; promtool accepts the file; and a real node_exporter,
// reading the directory with its textfile collector, serves the series
// without a scrape error.
func TestMetricsFile(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "zklock.prom")
	base := lockPath(t)
	const jobs, runs = 4, 6
	// Each job's runs queue on its lock and write the file as they leave
	// it, while the other jobs write theirs; a tryrun crowd on one more
	// path makes busy runs end at the same moment as successes.
	var wg sync.WaitGroup
	errs := make(chan error, jobs*runs+runs)
	start := func(args ...string) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := zklockCmd(append([]string{args[0], "--metrics-file", file}, args[1:]...)...)
			if err != nil {
				errs <- err
				return
			}
			if out, err := c.CombinedOutput(); err != nil {
				if code, _ := zktest.ExitCode(err); code != 75 {
					errs <- fmt.Errorf("%v: %v: %s", args, err, out)
				}
			} else if len(out) > 0 {
				errs <- fmt.Errorf("%v said %s", args, out)
			}
		}()
	}
	for j := range jobs {
		for range runs {
			start("run", "--path", fmt.Sprintf("%s/job%d", base, j), "--", "sleep", "0.05")
		}
	}
	for range runs {
		start("tryrun", "--path", base+"/crowd", "--", "sleep", "0.2")
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	promtool(t, file)

	ne := zktest.StartNodeExporter(t, dir)
	page, err := ne.Scrape(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for j := range jobs {
		p := fmt.Sprintf("%s/job%d", base, j)
		if v, ok := zktest.Sample(page, runsTotal(p, "success")); !ok || v != runs {
			t.Errorf("%s: %v successes served (%v), want %d", p, v, ok, runs)
		}
		if _, ok := zktest.Sample(page, fmt.Sprintf(`zklock_last_success_timestamp_seconds{path=%q}`, p)); !ok {
			t.Errorf("%s: no last success served", p)
		}
	}
	success, _ := zktest.Sample(page, runsTotal(base+"/crowd", "success"))
	busy, _ := zktest.Sample(page, runsTotal(base+"/crowd", "busy"))
	if success < 1 || success+busy != runs {
		t.Errorf("the tryrun crowd: %v successes and %v busy, want %d runs", success, busy, runs)
	}
	if v, ok := zktest.Sample(page, "node_textfile_scrape_error"); !ok || v != 0 {
		t.Errorf("node_textfile_scrape_error %v (%v), want 0:\n%s", v, ok, page)
	}

	// A failed run: the exit code changes, the last success stays.
	p := base + "/job0"
	before, _ := zktest.Sample(page, fmt.Sprintf(`zklock_last_success_timestamp_seconds{path=%q}`, p))
	if err := zklock(t, "run", "--metrics-file", file, "--path", p, "--", "sh", "-c", "exit 3").Run(); zktest.ExitCodeT(t, err) != 3 {
		t.Fatalf("the failing run: %v", err)
	}
	if page, err = ne.Scrape(context.Background()); err != nil {
		t.Fatal(err)
	}
	after, _ := zktest.Sample(page, fmt.Sprintf(`zklock_last_success_timestamp_seconds{path=%q}`, p))
	code, _ := zktest.Sample(page, fmt.Sprintf(`zklock_last_exit_code{path=%q}`, p))
	failures, _ := zktest.Sample(page, runsTotal(p, "failure"))
	if after != before || code != 3 || failures != 1 {
		t.Errorf("after a failure: last success %v (was %v), exit code %v, failures %v", after, before, code, failures)
	}
	promtool(t, file)
}

// TestMetricsFileSettings: a file that cannot be written is a warning,
// never the run's failure; a name that is not NAME.prom is refused before
// anything runs (the collector would skip it silently); the environment
// and the configuration file set it as the flag does.
func TestMetricsFileSettings(t *testing.T) {
	path := lockPath(t)
	out, err := zklock(t, "run", "--metrics-file", "/nonexistent/dir/zklock.prom", "--path", path, "--", "true").CombinedOutput()
	if err != nil || !strings.HasPrefix(string(out), "zklock: warning: could not write the metrics file: ") {
		t.Errorf("an unwritable metrics file: %v: %s", err, out)
	}
	out, err = zklock(t, "run", "--log-format", "json", "--metrics-file", "/nonexistent/dir/zklock.prom", "--path", path, "--", "true").CombinedOutput()
	if err != nil || !strings.Contains(string(out), `"level":"warning","msg":"could not write the metrics file: `) ||
		!strings.Contains(string(out), `"exit_code":0`) {
		t.Errorf("an unwritable metrics file, in JSON: %v: %s", err, out)
	}
	out, err = zklock(t, "run", "--metrics-file", "zklock.txt", "--path", path, "--", "true").CombinedOutput()
	if code := zktest.ExitCodeT(t, err); code != 64 || !strings.Contains(string(out), "NAME.prom") {
		t.Errorf("--metrics-file zklock.txt: exit %d: %s", code, out)
	}

	dir := t.TempDir()
	env := filepath.Join(dir, "env.prom")
	c := zklock(t, "run", "--path", path, "--", "true")
	c.Env = append(c.Env, "ZKLOCK_METRICS_FILE="+env)
	if out, err := c.CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	cfg := filepath.Join(dir, "config.toml")
	fromFile := filepath.Join(dir, "file.prom")
	if err := os.WriteFile(cfg, []byte(fmt.Sprintf("metrics_file = %q\n", fromFile)), 0o644); err != nil {
		t.Fatal(err)
	}
	c = zklock(t, "tryrun", "--path", path, "--", "true")
	c.Env = append(c.Env, "ZKLOCK_CONFIG="+cfg)
	if out, err := c.CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	for _, f := range []string{env, fromFile} {
		b, err := os.ReadFile(f)
		if err != nil || !strings.Contains(string(b), fmt.Sprintf(`zklock_runs_total{path=%q,outcome="success"} 1`, path)) {
			t.Errorf("%s: %v: %s", f, err, b)
		}
	}
}

// TestMetricsFileRefusals: a metrics file named through a link another
// user planted in a sticky directory (here to a root-only file) is a
// warning of one line, the file the link names keeps its content and
// mode, and the exit code is the command's. A run refused for its flags
// never reached a lock path and records nothing: the series of a typo
// would stay in the file for ever.
func TestMetricsFileRefusals(t *testing.T) {
	path := lockPath(t)
	dir := t.TempDir()
	if err := os.Chmod(filepath.Dir(dir), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o777|os.ModeSticky); err != nil {
		t.Fatal(err)
	}
	secret := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(secret, []byte("root's secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	planted := filepath.Join(dir, "zklock.prom")
	if err := os.Symlink(secret, planted); err != nil {
		t.Fatal(err)
	}
	if err := os.Lchown(planted, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		format string
		code   int
	}{{"text", 0}, {"text", 3}, {"json", 3}} {
		out, err := zklock(t, "run", "--log-format", tc.format, "--metrics-file", planted, "--path", path, "--", "sh", "-c", fmt.Sprintf("exit %d", tc.code)).CombinedOutput()
		if code := zktest.ExitCodeT(t, err); code != tc.code {
			t.Errorf("%s, command exiting %d: exit %d: %s", tc.format, tc.code, code, out)
		}
		var warnings []string
		for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			if strings.Contains(line, "could not write the metrics file: refusing to write through the symbolic link "+planted) {
				warnings = append(warnings, line)
			}
		}
		if len(warnings) != 1 {
			t.Errorf("%s: want one warning about the link, got:\n%s", tc.format, out)
		}
	}
	if b, err := os.ReadFile(secret); err != nil || string(b) != "root's secret\n" {
		t.Errorf("the file the planted link names: %q, %v", b, err)
	}
	if st, err := os.Stat(secret); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("the file the planted link names has mode %v (%v), want 0600", st.Mode().Perm(), err)
	}

	file := filepath.Join(t.TempDir(), "zklock.prom")
	for _, args := range [][]string{
		{"run", "--path", "no-slash", "--", "true"},
		{"run", "--path", path, "--limit", "2", "--shared", "--", "true"},
		{"tryrun", "--path", "/bad\xff", "--", "true"},
	} {
		args = append([]string{args[0], "--metrics-file", file}, args[1:]...)
		out, err := zklock(t, args...).CombinedOutput()
		if code := zktest.ExitCodeT(t, err); code != 64 {
			t.Errorf("%q: exit %d, want 64: %s", args, code, out)
		}
	}
	if b, err := os.ReadFile(file); err == nil {
		t.Errorf("runs refused for their flags were recorded:\n%s", b)
	}
}
