//go:build unix

package lockexec

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"

	"github.com/zklock/zklock/internal/testkit/zktest"
)

// TestForwardedSignalsReachChildOnce sends each signal through
// Spec.Signals and waits for the child's trap to log it before sending the
// next, so a duplicate would show up as an extra or out-of-order line.
func TestForwardedSignalsReachChildOnce(t *testing.T) {
	sigs := Forwarded
	var script strings.Builder
	script.WriteString("n=0\n")
	var want []string
	for _, sig := range sigs {
		name := strings.TrimPrefix(SignalName(sig), "SIG")
		want = append(want, name)
		fmt.Fprintf(&script, "trap 'echo %s >> \"$D/log\"; n=$((n+1))' %s\n", name, name)
	}
	fmt.Fprintf(&script, "mark ready $$\nwhile [ \"$n\" -lt %d ]; do sleep 0.01; done\nexit 0\n", len(sigs))

	s, dir := shSpec(t, script.String())
	sigc := make(chan os.Signal)
	s.Signals = sigc
	done := runAsync(context.Background(), s)
	killGroupOnCleanup(t, pids(t, waitMarker(t, dir, "ready"))[0])

	log := filepath.Join(dir, "log")
	for i, sig := range sigs {
		sigc <- sig
		zktest.Eventually(t, waitTimeout, SignalName(sig)+" logged", func() bool { return len(lines(log)) > i })
	}
	if r := await(t, done); r.err != nil {
		t.Fatalf("Run: %v", r.err)
	}
	if got := lines(log); !reflect.DeepEqual(got, want) {
		t.Fatalf("child saw %q, want each once: %q", got, want)
	}
}

// TestForwardedSignalReachesGrandchildren: a forwarded signal goes to the
// whole group, and a command killed by it reports 128+N.
func TestForwardedSignalReachesGrandchildren(t *testing.T) {
	s, dir := shSpec(t, `sh -c 'trap "echo got >> \"$D/gc\"; exit 0" USR1; echo $$ > "$D/gcpid.tmp"; mv "$D/gcpid.tmp" "$D/gcpid"; while :; do sleep 0.01; done' &
while [ ! -e "$D/gcpid" ]; do sleep 0.01; done
mark ready $$
wait`)
	sigc := make(chan os.Signal, 1)
	s.Signals = sigc
	done := runAsync(context.Background(), s)
	killGroupOnCleanup(t, pids(t, waitMarker(t, dir, "ready"))[0])
	gc := pids(t, waitMarker(t, dir, "gcpid"))[0]

	sigc <- syscall.SIGUSR1
	r := await(t, done)
	ee, ok := r.err.(*ExitError)
	if !ok || ee.Signal != syscall.SIGUSR1 || ee.Code != 128+int(syscall.SIGUSR1) {
		t.Fatalf("got %#v (%v), want death by SIGUSR1", r.err, r.err)
	}
	zktest.Eventually(t, waitTimeout, "grandchild trap", func() bool { return len(lines(filepath.Join(dir, "gc"))) == 1 })
	zktest.Eventually(t, waitTimeout, "grandchild exit", func() bool { return !zktest.ProcessAlive(gc) })
}
