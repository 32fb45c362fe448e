//go:build linux

package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zklock/zklock/internal/testkit/robust"
	"github.com/zklock/zklock/internal/testkit/zktest"
)

// Rules of the checks after the run.
const (
	RuleZnodes    = "leftover-znode"
	RuleProcesses = "leftover-process"
)

// zklockCmd is a zklock of the suite on a client slot.
func (s *suite) zklockCmd(slot int, args ...string) *exec.Cmd {
	cmd := exec.Command(s.zklock, append(s.common(), args...)...)
	cmd.Env = append(os.Environ(), "ZKLOCK_SERVERS="+s.connString(slot), "NO_COLOR=1")
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	return cmd
}

// leftovers checks that the run left nothing: once the records of the
// last success are forgotten, no znode below root (the sessions of killed
// zklocks expire within T, and the server reaps an empty lock path), and
// no process.
func (s *suite) leftovers(slot int) []robust.Violation {
	var out []robust.Violation
	// The records of the last success are kept on purpose, by --once-per
	// and by --order-key (the deploy queue): forget them as an operator
	// would, and judge what else is left.
	for _, p := range []string{pathOnce, pathQueue} {
		if b, err := s.zklockCmd(slot, "forget", "--path", p).CombinedOutput(); err != nil {
			s.fail(fmt.Errorf("zklock forget %s: %v: %s", p, err, b))
		}
	}
	deadline := time.Now().Add(2*s.T + 30*time.Second)
	var left []string
	for {
		var err error
		left, err = s.znodes()
		if err == nil && len(left) == 0 {
			break
		}
		if time.Now().After(deadline) {
			if err != nil {
				s.fail(fmt.Errorf("listing %s: %w", root, err))
			}
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if len(left) > 0 {
		out = append(out, robust.Violation{Rule: RuleZnodes, Path: root, At: mono(),
			Detail: fmt.Sprintf("%d znodes left under %s: %s", len(left), root, strings.Join(left, " "))})
	}
	// A process outlives its zklock by at most a kill's grace; wait that
	// long before calling one left behind.
	deadline = time.Now().Add(s.T + 10*time.Second)
	var pids []int
	for {
		pids = s.procs.leftover(s.self, s.zklock)
		if len(pids) == 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	for _, pid := range pids {
		cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		out = append(out, robust.Violation{Rule: RuleProcesses, At: mono(),
			Detail: fmt.Sprintf("pid %d still running: %s", pid, strings.ReplaceAll(string(cmdline), "\x00", " "))})
		syscall.Kill(pid, syscall.SIGKILL)
	}
	return out
}

// znodes lists every znode below root, straight from the ensemble.
func (s *suite) znodes() ([]string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := zktest.Dial(ctx, s.cluster.Addrs())
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	var out []string
	var walk func(string) error
	walk = func(p string) error {
		children, _, err := conn.Children(p)
		if err == zk.ErrNoNode {
			return nil
		}
		if err != nil {
			return err
		}
		slices.Sort(children)
		for _, c := range children {
			out = append(out, p+"/"+c)
			if err := walk(p + "/" + c); err != nil {
				return err
			}
		}
		return nil
	}
	return out, walk(root)
}

// expiring is the line a ZooKeeper server logs when it expires a session.
var expiring = regexp.MustCompile(`Expiring session (0x[0-9a-f]+)`)

// expiredSessions reads the servers' logs for every session they expired:
// a loss is needed when the session was, needless when it was not.
func expiredSessions(c *zktest.Cluster) []string {
	seen := map[string]bool{}
	var out []string
	for _, srv := range c.Servers() {
		f, err := os.Open(srv.LogPath())
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			if m := expiring.FindStringSubmatch(sc.Text()); m != nil && !seen[normSession(m[1])] {
				seen[normSession(m[1])] = true
				out = append(out, normSession(m[1]))
			}
		}
		f.Close()
	}
	return out
}
