package promfile

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// envRecord makes the test binary a recorder: it records one run in the
// file the variable names and prints the error, if any. The tests run it
// as another user.
const envRecord = "ZKLOCK_PROMFILE_RECORD"

func TestMain(m *testing.M) {
	if name := os.Getenv(envRecord); name != "" {
		if err := Record(name, Run{Paths: []string{"/a"}, End: time.Now(), Outcome: "success"}); err != nil {
			fmt.Println("error:", err)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// The users of the tests: root, and two others. They run as root, which
// can make files of any user's.
const (
	rootUID   = 0
	nobodyUID = 65534
	daemonUID = 1
)

// recorder runs Record as a user.
type recorder struct {
	bin string // a copy of the test binary that every user may run
}

func newRecorder(t *testing.T) *recorder {
	t.Helper()
	if os.Geteuid() != rootUID {
		t.Fatal("these tests make files of several users: run them as root")
	}
	dir := t.TempDir()
	if err := os.Chmod(filepath.Dir(dir), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "promfile.test")
	data, err := os.ReadFile(os.Args[0])
	if err == nil {
		err = os.WriteFile(bin, data, 0o755)
	}
	if err != nil {
		t.Fatal(err)
	}
	return &recorder{bin: bin}
}

// record records a run in name as uid, and returns Record's error ("" for
// none).
func (r *recorder) record(t *testing.T, uid uint32, name string) string {
	t.Helper()
	if uid == rootUID {
		if err := Record(name, Run{Paths: []string{"/a"}, End: time.Now(), Outcome: "success"}); err != nil {
			return err.Error()
		}
		return ""
	}
	c := exec.Command(r.bin, "-test.run=^$")
	c.Env = append(os.Environ(), envRecord+"="+name)
	c.Dir = "/"
	c.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uid, Gid: uid}}
	out, err := c.CombinedOutput()
	if err != nil {
		t.Fatalf("the run as uid %d: %v: %s", uid, err, out)
	}
	return strings.TrimPrefix(strings.TrimSpace(string(out)), "error: ")
}

// sharedDir is a directory like /tmp: everyone may write in it, and it is
// sticky.
func sharedDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.Chmod(filepath.Dir(dir), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o777|os.ModeSticky); err != nil {
		t.Fatal(err)
	}
	return dir
}

// privateDir is a directory of uid's own, for the files a link is aimed
// at.
func privateDir(t *testing.T, uid int) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.Chmod(filepath.Dir(dir), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(dir, uid, uid); err != nil {
		t.Fatal(err)
	}
	return dir
}

// plant makes a file of uid's with data and mode.
func plant(t *testing.T, name string, uid int, data string, mode os.FileMode) {
	t.Helper()
	if err := os.WriteFile(name, []byte(data), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(name, uid, uid); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(name, mode); err != nil {
		t.Fatal(err)
	}
}

// link makes a symbolic link of uid's.
func link(t *testing.T, target, name string, uid int) {
	t.Helper()
	if err := os.Symlink(target, name); err != nil {
		t.Fatal(err)
	}
	if err := os.Lchown(name, uid, uid); err != nil {
		t.Fatal(err)
	}
}

// unchanged fails unless name holds data with mode, or, for data "", does
// not exist.
func unchanged(t *testing.T, name, data string, mode os.FileMode) {
	t.Helper()
	got, err := os.ReadFile(name)
	if data == "" {
		if err == nil {
			t.Errorf("%s was created: %q", name, got)
		}
		return
	}
	if err != nil || !bytes.Equal(got, []byte(data)) {
		t.Errorf("%s was changed: %q (%v), want %q", name, got, err, data)
	}
	if st, err := os.Stat(name); err != nil || st.Mode().Perm() != mode {
		t.Errorf("%s's mode is now %v (%v), want %v", name, st.Mode().Perm(), err, mode)
	}
}

// TestRecordRefusesPlantedLinks: in a sticky directory that everyone may
// write in, a link another user planted under the metrics file's name is
// never written through: not to a file of the running user's that only
// it may read, not to a name that does not exist yet, not to another
// tool's *.prom file, not to a file like /etc/passwd. Each is refused
// with an error (the run's warning), and the file it points to keeps its
// content and mode. It is checked for root's runs, with links of nobody's,
// and for nobody's runs, with links of daemon's; root and the running
// user's own links are followed, to an existing *.prom file only.
func TestRecordRefusesPlantedLinks(t *testing.T) {
	rec := newRecorder(t)
	for _, users := range []struct{ runner, planter int }{{rootUID, nobodyUID}, {nobodyUID, daemonUID}} {
		t.Run(fmt.Sprintf("uid%d", users.runner), func(t *testing.T) {
			shared, own := sharedDir(t), privateDir(t, users.runner)
			secret := filepath.Join(own, "secret.prom")
			plant(t, secret, users.runner, "the running user's secret\n", 0o600)
			other := filepath.Join(own, "other.prom")
			plant(t, other, users.runner, "other_tool_metric 1\n", 0o644)
			passwd := filepath.Join(own, "passwd")
			plant(t, passwd, users.runner, "root:x:0:0:root:/root:/bin/sh\n", 0o644)
			for _, tc := range []struct {
				name, target, data string
				mode               os.FileMode
			}{
				{"secret.prom", secret, "the running user's secret\n", 0o600},
				{"dangling.prom", filepath.Join(own, "new.prom"), "", 0},
				{"other.prom", other, "other_tool_metric 1\n", 0o644},
				{"passwd.prom", passwd, "root:x:0:0:root:/root:/bin/sh\n", 0o644},
			} {
				name := filepath.Join(shared, tc.name)
				link(t, tc.target, name, users.planter)
				msg := rec.record(t, uint32(users.runner), name)
				if !strings.Contains(msg, "refusing to write through the symbolic link "+name) {
					t.Errorf("%s -> %s: %q, want a refusal", tc.name, tc.target, msg)
				}
				unchanged(t, tc.target, tc.data, tc.mode)
				if fi, err := os.Lstat(name); err != nil || fi.Mode()&os.ModeSymlink == 0 {
					t.Errorf("%s: the link was replaced (%v)", name, err)
				}
			}
			// The running user's own links: to a *.prom file that exists,
			// followed, and the link stays; to anything else, refused.
			mine := filepath.Join(own, "mine.prom")
			plant(t, mine, users.runner, "", 0o644)
			for _, tc := range []struct {
				target string
				ok     bool
			}{{mine, true}, {filepath.Join(own, "absent.prom"), false}, {passwd, false}} {
				name := filepath.Join(shared, "own-"+filepath.Base(tc.target)+".prom")
				link(t, tc.target, name, users.runner)
				msg := rec.record(t, uint32(users.runner), name)
				if (msg == "") != tc.ok {
					t.Errorf("the running user's link to %s: %q, want written %v", tc.target, msg, tc.ok)
				}
			}
			if data, err := os.ReadFile(mine); err != nil || !strings.Contains(string(data), `zklock_runs_total{path="/a",outcome="success"} 1`) {
				t.Errorf("the file the running user's link names: %q (%v)", data, err)
			}
			unchanged(t, passwd, "root:x:0:0:root:/root:/bin/sh\n", 0o644)
			unchanged(t, filepath.Join(own, "absent.prom"), "", 0)
		})
	}
}

// TestRecordChecksTheDirectory: in a directory others may write in, the
// file is written only when the directory is sticky and the file and its
// sidecar, if there, are the running user's: another user's file there
// keeps its content, a sidecar planted as a link creates nothing where it
// points, and a directory that is not sticky is refused. In the running
// user's sticky directory its own file is written as usual.
func TestRecordChecksTheDirectory(t *testing.T) {
	rec := newRecorder(t)
	for _, users := range []struct{ runner, planter int }{{rootUID, nobodyUID}, {nobodyUID, daemonUID}} {
		t.Run(fmt.Sprintf("uid%d", users.runner), func(t *testing.T) {
			shared, own := sharedDir(t), privateDir(t, users.runner)
			theirs := filepath.Join(shared, "theirs.prom")
			plant(t, theirs, users.planter, "their_metric 1\n", 0o644)
			if msg := rec.record(t, uint32(users.runner), theirs); !strings.Contains(msg, "refusing to write") {
				t.Errorf("another user's file in a sticky directory: %q, want a refusal", msg)
			}
			unchanged(t, theirs, "their_metric 1\n", 0o644)

			lockName := filepath.Join(shared, "locked.prom")
			aimed := filepath.Join(own, "created-by-the-sidecar")
			link(t, aimed, sidecarOf(lockName), users.planter)
			if msg := rec.record(t, uint32(users.runner), lockName); msg == "" {
				t.Error("a sidecar planted as a link was used")
			}
			unchanged(t, aimed, "", 0)

			mine := filepath.Join(shared, "mine.prom")
			if msg := rec.record(t, uint32(users.runner), mine); msg != "" {
				t.Errorf("the running user's own file in a sticky directory: %s", msg)
			}
			if msg := rec.record(t, uint32(users.runner), mine); msg != "" {
				t.Errorf("the running user's own file, again: %s", msg)
			}

			open := t.TempDir()
			for _, d := range []string{filepath.Dir(open), open} {
				if err := os.Chmod(d, 0o777); err != nil {
					t.Fatal(err)
				}
			}
			if msg := rec.record(t, uint32(users.runner), filepath.Join(open, "zklock.prom")); !strings.Contains(msg, "not sticky") {
				t.Errorf("a directory all may write in, not sticky: %q, want a refusal", msg)
			}
		})
	}
}
