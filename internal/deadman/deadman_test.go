package deadman

import "testing"

// TestDeadmanSwitchParses reads the protocol's lines, and ignores what is
// not one of them, without allocating: the watchdog runs with the garbage
// collector off (lockexec.watchdogEnviron), and it is renewed many times per session
// timeout for as long as a command runs.
func TestDeadmanSwitchParses(t *testing.T) {
	for _, c := range []struct {
		lines      []string
		pgid       int
		stop, kill int64
	}{
		{[]string{"arm 4242", "at 1000 2000"}, 4242, 1000, 2000},
		{[]string{"at 1000 2000", "at 3000 4000"}, 0, 3000, 4000},
		{[]string{"arm", "arm -3", "arm 12x", "at 5", "at 1 x", "bogus 1 2"}, 0, 0, 0},
		{[]string{"at 0 0"}, 0, 0, 0},
	} {
		var s Switch
		for _, l := range c.lines {
			s.Handle([]byte(l))
		}
		if s.PGID != c.pgid || s.StopAt != c.stop || s.KillAt != c.kill {
			t.Errorf("%q: pgid %d, at %d %d; want %d, at %d %d", c.lines, s.PGID, s.StopAt, s.KillAt, c.pgid, c.stop, c.kill)
		}
	}
	var s Switch
	arm, at := []byte("arm 4242"), []byte("at 1732377600000000000 1732377602000000000")
	if n := testing.AllocsPerRun(100, func() { s.Handle(arm); s.Handle(at) }); n != 0 {
		t.Errorf("Handle allocates %v times per line pair, want 0", n)
	}
}
