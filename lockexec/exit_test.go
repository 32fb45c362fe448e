//go:build unix

package lockexec

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

func TestExitCodePassthrough(t *testing.T) {
	for _, code := range []int{0, 3, 255} {
		s, _ := shSpec(t, "exit "+strconv.Itoa(code))
		err := Supervise(context.Background(), s)
		if code == 0 {
			if err != nil {
				t.Fatalf("exit 0: got %v, want nil", err)
			}
			continue
		}
		var ee *ExitError
		if !errors.As(err, &ee) || ee.Code != code || ee.Signal != 0 {
			t.Fatalf("exit %d: got %#v (%v)", code, err, err)
		}
	}
}

func TestKilledBySignal(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGKILL} {
		s, _ := shSpec(t, "kill -"+strings.TrimPrefix(SignalName(sig), "SIG")+" $$; sleep 5")
		err := Supervise(context.Background(), s)
		var ee *ExitError
		if !errors.As(err, &ee) || ee.Code != 128+int(sig) || ee.Signal != sig {
			t.Fatalf("%v: got %#v (%v)", sig, err, err)
		}
		if want := "killed by " + SignalName(sig); !strings.Contains(err.Error(), want) {
			t.Errorf("message %q lacks %q", err, want)
		}
	}
}

func TestStartErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	plain := write("plain", "echo hi\n", 0o644)
	noMagic := write("nomagic", "\x00\x01\x02 not a program\n", 0o755)
	badInterp := write("badinterp", "#!/nonexistent/interpreter\n", 0o755)
	subdir := filepath.Join(dir, "subdir")
	if err := os.Mkdir(subdir, 0o755); err != nil {
		t.Fatal(err)
	}
	// A PATH directory holding only a non-executable "inpath" file.
	pathDir := t.TempDir()
	if err := os.WriteFile(filepath.Join(pathDir, "zklock-test-inpath"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", pathDir+string(filepath.ListSeparator)+os.Getenv("PATH"))

	cases := []struct {
		name string
		argv []string
		code int
	}{
		{"missing in PATH", []string{"zklock-test-no-such-command"}, 127},
		{"missing path", []string{filepath.Join(dir, "missing")}, 127},
		{"missing directory in path", []string{filepath.Join(plain, "x")}, 127},
		{"empty argv", nil, 127},
		{"not executable", []string{plain}, 126},
		{"directory", []string{subdir}, 126},
		{"not a program (ENOEXEC)", []string{noMagic}, 126},
		{"missing interpreter", []string{badInterp}, 126},
		{"not executable in PATH", []string{"zklock-test-inpath"}, 126},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := Supervise(context.Background(), Spec{Argv: c.argv, Stdin: devNull(t)})
			var se *StartError
			if !errors.As(err, &se) || se.Code != c.code {
				t.Fatalf("got %#v (%v), want StartError code %d", err, err, c.code)
			}
			if len(c.argv) == 0 {
				return
			}
			if se.Name != c.argv[0] {
				t.Errorf("Name = %q, want %q", se.Name, c.argv[0])
			}
			// The runner's way: Resolve before queueing for the lock, then
			// run what was resolved. The outcome must be the same.
			path, err := Resolve(c.argv)
			if err == nil {
				err = Supervise(context.Background(), Spec{Argv: c.argv, Path: path, Stdin: devNull(t)})
			}
			if !errors.As(err, &se) || se.Code != c.code {
				t.Fatalf("resolved first: got %#v (%v), want StartError code %d", err, err, c.code)
			}
			if path == "" {
				return
			}
			// With a watchdog the command is executed by the gate, which
			// reports the exec's failure for the same classification.
			eachWatchdog(t, func(t *testing.T) {
				wd, err := StartWatchdog()
				if err != nil {
					t.Fatal(err)
				}
				defer wd.Retire()
				err = Supervise(context.Background(), Spec{Argv: c.argv, Path: path, Stdin: devNull(t), Watchdog: wd})
				if !errors.As(err, &se) || se.Code != c.code {
					t.Fatalf("through the gate: got %#v (%v), want StartError code %d", err, err, c.code)
				}
			})
		})
	}
	err := Supervise(context.Background(), Spec{Argv: []string{"zklock-test-no-such-command"}})
	if !errors.Is(err, exec.ErrNotFound) {
		t.Errorf("missing command: %v does not wrap exec.ErrNotFound", err)
	}
}

func TestEnvAndStdio(t *testing.T) {
	dir := t.TempDir()
	out, err := os.Create(filepath.Join(dir, "out"))
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	in, err := os.Open(writeFile(t, dir, "in", "from stdin\n"))
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	err = Supervise(context.Background(), Spec{
		// "sh" without a slash: found through PATH.
		Argv:   []string{"sh", "-c", `read line; echo "$line/$ZKLOCK_TEST"; echo oops >&2`},
		Env:    []string{"ZKLOCK_TEST=env passed", "PATH=/usr/bin:/bin"},
		Stdin:  in,
		Stdout: out,
		Stderr: out,
	})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(out.Name())
	if got, want := string(b), "from stdin/env passed\noops\n"; got != want {
		t.Fatalf("output %q, want %q", got, want)
	}
}

func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}
