package lockexec

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zklock/zklock/internal/testkit/zktest"
)

// TestWatchdogIdlesAfterItFired: once the watchdog has sent its signals,
// the deadlines it acted on are behind it. It must go back to sleeping on
// its pipe, not poll with a zero timeout until zklock says "ok": a zklock
// suspended with Ctrl-Z past its deadline would otherwise leave its
// watchdog burning a whole CPU for as long as the suspension lasts.
func TestWatchdogIdlesAfterItFired(t *testing.T) { eachWatchdog(t, idlesAfterItFired) }

func idlesAfterItFired(t *testing.T) {
	wd, err := StartWatchdog()
	if err != nil {
		t.Fatal(err)
	}
	defer wd.Retire()
	victim := exec.Command("sleep", "100")
	victim.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := victim.Start(); err != nil {
		t.Fatal(err)
	}
	killGroupOnCleanup(t, victim.Process.Pid)
	now := time.Now()
	wd.Renew(now.Add(50*time.Millisecond), now.Add(100*time.Millisecond))
	if err := wd.arm(victim.Process.Pid); err != nil {
		t.Fatal(err)
	}
	victim.Wait() // killed by the watchdog
	zktest.Eventually(t, waitTimeout, "the watchdog to report", wd.Fired)
	before := cpuTime(t, wd.pid)
	time.Sleep(time.Second)
	if used := cpuTime(t, wd.pid) - before; used > 100*time.Millisecond {
		t.Errorf("the watchdog used %s of CPU in the second after it fired, with nothing left to do", used)
	}
}

// cpuTime is the CPU time (user and system) a process has used so far.
func cpuTime(t *testing.T, pid int) time.Duration {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	// Fields 14 and 15 of stat (utime, stime), counted from the state, the 3rd.
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * time.Second / 100 // USER_HZ
}
