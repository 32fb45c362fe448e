//go:build unix

package lockexec

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
)

// companionDir holds the zklock-watchdog that companionBinary builds, once
// per test binary; TestMain removes it.
var (
	companionOnce sync.Once
	companionDir  string
	companionPath string
	companionErr  error
)

// companionBinary builds cmd/zklock-watchdog for the platform the tests run
// on (under qemu, arm64 too) and returns its path.
func companionBinary(t *testing.T) string {
	t.Helper()
	companionOnce.Do(func() {
		companionDir, companionErr = os.MkdirTemp("", "lockexec-companion-")
		if companionErr != nil {
			return
		}
		companionPath = filepath.Join(companionDir, CompanionName)
		c := exec.Command("go", "build", "-o", companionPath, "github.com/zklock/zklock/cmd/zklock-watchdog")
		c.Env = append(os.Environ(), "GOOS="+runtime.GOOS, "GOARCH="+runtime.GOARCH, "CGO_ENABLED=0")
		if out, err := c.CombinedOutput(); err != nil {
			companionErr = &exec.Error{Name: "go build: " + string(out), Err: err}
		}
	})
	if companionErr != nil {
		t.Fatal(companionErr)
	}
	return companionPath
}

// testExecutable is the test binary, which stands in for zklock.
func testExecutable(t *testing.T) string {
	t.Helper()
	p, err := selfExecutable()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestCompanionBeside: zklock finds its companion in the directory of the
// file that runs, through a symbolic link, and only an executable file.
func TestCompanionBeside(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "opt", "zklock")
	bin := filepath.Join(dir, "bin")
	for _, d := range []string{filepath.Dir(real), bin} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(real, nil, 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(bin, "zklock")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	if p, ok := companionBeside(link); ok {
		t.Fatalf("found %s where there is none", p)
	}
	want := filepath.Join(filepath.Dir(real), CompanionName)
	if err := os.WriteFile(want, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if p, ok := companionBeside(link); ok {
		t.Fatalf("took %s, which is not executable", p)
	}
	if err := os.Chmod(want, 0o755); err != nil {
		t.Fatal(err)
	}
	if p, ok := companionBeside(link); !ok || p != want {
		t.Fatalf("companionBeside(%s) = %q, %v; want %s", link, p, ok, want)
	}
}

// TestCompanionRefusesByHand: run by hand, the companion says what it is
// and does nothing.
func TestCompanionRefusesByHand(t *testing.T) {
	c := exec.Command(companionBinary(t))
	c.Env = []string{"PATH=" + os.Getenv("PATH")}
	out, err := c.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 || len(out) == 0 {
		t.Fatalf("got %v, %q; want exit 2 and a line saying why", err, out)
	}
}
