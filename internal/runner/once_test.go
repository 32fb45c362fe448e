package runner

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zklock/zklock/internal/owner"
	"github.com/zklock/zklock/internal/recipe"
	"github.com/zklock/zklock/internal/success"
	"github.com/zklock/zklock/internal/testkit/zktest/shared"
)

// TestOncePerWriterClock: the record writer's clock counts as much as
// the servers'. Go reads its clock through the vDSO, out of libfaketime's
// reach, so the record is written through success.Write with a skewed
// clock, as a writer whose clock is off would write it. A writer 1h ahead
// makes the record young for an hour more: the job must not run, though
// the servers' age has passed the window. A writer 10s behind makes the
// two ages disagree for good: once both have passed the window, the job
// must run, and not be skipped forever.
func TestOncePerWriterClock(t *testing.T) {
	const window = 2 * time.Second
	dir := t.TempDir()
	o := runOptions(t, "true")
	o.OncePer = window
	path := o.Paths[0]
	t.Cleanup(func() { shared.Raw(t).Delete(path+"/"+success.NodeName, -1) })
	if err := run(t, o); err != nil {
		t.Fatal(err)
	}
	// skewed writes the record as a writer whose clock is off by skew,
	// and returns when the write was answered, on this host's clock.
	skewed := func(skew time.Duration) time.Time {
		t.Helper()
		me := owner.New("test", []string{"./job"}, recipe.ModeExclusive)
		if _, err := success.Write(shared.Ctx(t, 10*time.Second), shared.Client(t), path, me, time.Now().Add(skew)); err != nil {
			t.Fatal(err)
		}
		return time.Now()
	}
	// after runs the job once window has passed since at on this host's
	// clock, which the server shares on loopback: the servers' age of the
	// record has passed the window then.
	after := func(at time.Time, name string) (ran bool, err error) {
		t.Helper()
		time.Sleep(time.Until(at.Add(window)))
		o := o
		o.Argv = []string{"touch", filepath.Join(dir, name)}
		err = run(t, o)
		_, statErr := os.Stat(o.Argv[1])
		return statErr == nil, err
	}

	t.Run("writer 1h ahead", func(t *testing.T) {
		ran, err := after(skewed(time.Hour), "ahead")
		var recent *RecentSuccessError
		if ran || !errors.As(err, &recent) || recent.Doubt == nil {
			t.Fatalf("ran %v, %v; want a skip in doubt: the writer's clock says the success is 1h in the future", ran, err)
		}
		if msg := err.Error(); !strings.Contains(msg, "old by the servers' clocks") || !strings.Contains(msg, "in the future by the clock of") ||
			!strings.Contains(msg, "skipped until every age passes the window of 2s, in ") {
			t.Errorf("the skip does not say both ages and when it ends: %s", msg)
		}
	})
	t.Run("writer 10s behind", func(t *testing.T) {
		if ran, err := after(skewed(-10*time.Second), "behind"); !ran || err != nil {
			t.Fatalf("ran %v, %v; want a run: both ages have passed the window", ran, err)
		}
	})
}
