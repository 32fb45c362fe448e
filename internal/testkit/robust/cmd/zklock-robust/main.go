//go:build linux

// Command zklock-robust is the robustness suite's runner, behind
// scripts/robustness.sh: it starts an ensemble on loopback with a fault
// proxy between every client and every member, runs crowds of real zklock
// processes on a few paths while a seeded nemesis injects faults, records
// the history, judges it with package robust, and writes a report
// directory. It exits 1 on any violation.
//
// It is also the command the workloads run under zklock (hold) and that
// command's grandchild (beat).
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/zklock/zklock/internal/testkit/robust"
	"github.com/zklock/zklock/internal/testkit/zktest"
)

func main() {
	if len(os.Args) > 1 {
		switch os.Args[1] {
		case "hold":
			os.Exit(hold(os.Args[2:]))
		case "beat":
			os.Exit(beatCmd(os.Args[2:]))
		case "judge":
			os.Exit(rejudge(os.Args[2:]))
		}
	}
	os.Exit(runSuite(os.Args[1:]))
}

// suite is one run of the suite.
type suite struct {
	zklock, self, dir, host string
	T                       time.Duration
	cluster                 *zktest.Cluster
	proxies                 [][]*zktest.Proxy // by client slot, then server
	slots                   map[string]int    // each workload's first client slot
	procs                   *procs

	mu      sync.Mutex
	history *os.File
	errs    []error
}

// waitTimeout is a waiter's --timeout: longer than the progress bound, so
// that a waiter stalled after a heal is seen waiting throughout.
func (s *suite) waitTimeout() time.Duration { return 2 * s.progress() }

// progress is the liveness bound after a heal: the session of a holder
// lost in the fault expires (T), its successor reconnects and takes the
// queue (up to the connect timeout, 2 T), and the longest hold ends
// (5/4 T); doubled for a loaded machine, and a restart's JVM warm-up.
func (s *suite) progress() time.Duration { return 2*(s.T+2*s.T+s.T*5/4) + 5*time.Second }

// common are the flags every zklock of the suite gets.
func (s *suite) common() []string {
	return []string{"--session-timeout", s.T.String(), "--connect-timeout", (2 * s.T).String(), "--log-format", "json"}
}

func (s *suite) connString(slot int) string {
	var a []string
	for _, p := range s.proxies[slot] {
		a = append(a, p.Addr())
	}
	return strings.Join(a, ",")
}

func (s *suite) record(rec robust.Record) {
	b, err := json.Marshal(rec)
	if err != nil {
		panic(err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.history.Write(append(b, '\n'))
}

// fail records an error of the suite itself (not a violation): the run
// proves nothing, and exits 2.
func (s *suite) fail(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.errs = append(s.errs, err)
}

func runSuite(args []string) int {
	fs := flag.NewFlagSet("zklock-robust", flag.ContinueOnError)
	zklock := fs.String("zklock", "", "the zklock binary (required)")
	out := fs.String("out", "", "the report directory (required; created)")
	duration := fs.Duration("duration", 90*time.Second, "how long the nemesis injects faults")
	seed := fs.Int64("seed", 0, "the nemesis's seed; 0 picks one")
	wls := fs.String("workload", "all", "workloads, comma-separated: all, or "+names(workloads))
	fts := fs.String("faults", "all", "fault kinds, comma-separated: all (but delete-holder), none, or "+faultNames(true))
	servers := fs.Int("servers", 3, "ensemble size, 3 or 5")
	session := fs.Duration("session-timeout", 3*time.Second, "the session timeout T every zklock asks for")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *zklock == "" || *out == "" || (*servers != 3 && *servers != 5) || *session < time.Second {
		fmt.Fprintln(os.Stderr, "zklock-robust: need --zklock and --out; --servers is 3 or 5; --session-timeout at least 1s")
		return 2
	}
	abs, _ := filepath.Abs(*zklock)
	if fi, err := os.Stat(abs); err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
		fmt.Fprintf(os.Stderr, "zklock-robust: --zklock %s is not an executable file\n", *zklock)
		return 2
	}
	chosenW, err := pick(*wls, names(workloads), names(workloads))
	if err != nil {
		fmt.Fprintln(os.Stderr, "zklock-robust: --workload:", err)
		return 2
	}
	chosenF, err := pick(*fts, faultNames(false), faultNames(true))
	if err != nil {
		fmt.Fprintln(os.Stderr, "zklock-robust: --faults:", err)
		return 2
	}
	if *seed == 0 {
		*seed = time.Now().UnixNano() & (1<<53 - 1)
	}
	fmt.Printf("zklock-robust: seed %d (replay: --seed %d)\n", *seed, *seed)
	for _, d := range []string{"lives", "kernel", "logs"} {
		if err := os.MkdirAll(filepath.Join(*out, d), 0o755); err != nil {
			fmt.Fprintln(os.Stderr, "zklock-robust:", err)
			return 2
		}
	}
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintln(os.Stderr, "zklock-robust:", err)
		return 2
	}
	host, _ := os.Hostname()
	s := &suite{zklock: abs, self: self, dir: *out, host: host, T: *session, procs: newProcs()}
	s.history, err = os.Create(filepath.Join(*out, "history.jsonl"))
	if err != nil {
		fmt.Fprintln(os.Stderr, "zklock-robust:", err)
		return 2
	}
	defer s.history.Close()

	// An interrupt ends the run early, and still cleans up.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	s.cluster, err = zktest.StartEnsemble(ctx, *servers, zktest.Options{PeerProxies: true, LogDir: filepath.Join(*out, "logs")})
	if err != nil {
		fmt.Fprintln(os.Stderr, "zklock-robust:", err)
		return 2
	}
	defer s.cluster.Stop()

	var crowd []workload
	for _, wl := range workloads {
		if slices.Contains(chosenW, wl.name) {
			crowd = append(crowd, wl)
		}
	}
	slots := 0
	for _, wl := range crowd {
		slots += wl.workers
	}
	slots++ // the revoker's and the final check's
	for slot := 0; slot < slots; slot++ {
		var ps []*zktest.Proxy
		for _, srv := range s.cluster.Servers() {
			p, err := zktest.NewProxy(srv.Addr())
			if err != nil {
				fmt.Fprintln(os.Stderr, "zklock-robust:", err)
				return 2
			}
			defer p.Close()
			ps = append(ps, p)
		}
		s.proxies = append(s.proxies, ps)
	}

	header := robust.History{Seed: *seed, Session: s.T, Paths: paths}
	header.Begin = mono()
	s.record(robust.Record{Header: &header})
	fmt.Printf("zklock-robust: %d servers, T %s, workloads %s, faults %s, %s of faults then %s calm\n",
		*servers, s.T, strings.Join(chosenW, ","), strings.Join(chosenF, ","), *duration, s.progress()+s.T)

	// The workers go on through the faults and a calm after them as long
	// as the progress bound, so that the last heal is judged too.
	work, endWork := context.WithCancel(ctx)
	var wg sync.WaitGroup
	slot := 0
	s.slots = map[string]int{}
	for i, wl := range crowd {
		s.slots[wl.name] = slot
		for w := 0; w < wl.workers; w++ {
			rng := rand.New(rand.NewPCG(uint64(*seed), uint64(100*i+w+1)))
			wg.Add(1)
			go func(slot int) {
				defer wg.Done()
				s.worker(work, wl, w, slot, rng)
			}(slot)
			slot++
		}
	}
	if slices.Contains(chosenW, "revoke") {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.revoker(work, slots-1, rand.New(rand.NewPCG(uint64(*seed), 99)))
		}()
	}
	n := &nemesis{s: s, rng: rand.New(rand.NewPCG(uint64(*seed), 0)), kinds: chosenF, backup: map[int]string{}}
	faultCtx, endFaults := context.WithTimeout(ctx, *duration)
	n.run(faultCtx)
	endFaults()
	calm := time.NewTimer(s.progress() + s.T)
	select {
	case <-calm.C:
	case <-ctx.Done():
	}
	endWork()
	wg.Wait()
	end := robust.History{Seed: *seed, Session: s.T, Begin: header.Begin, End: mono()}
	s.record(robust.Record{Header: &end})

	leftovers := s.leftovers(slots - 1)
	for _, id := range expiredSessions(s.cluster) {
		s.record(robust.Record{Expired: id})
	}
	s.cluster.Stop()
	s.history.Sync()
	return s.judge(leftovers)
}

// revoker, with the exclusive workload, revokes the holder of its path now
// and then: the holder must stop its whole tree before its successor runs.
func (s *suite) revoker(ctx context.Context, slot int, rng *rand.Rand) {
	for ctx.Err() == nil {
		time.Sleep(time.Duration(1000+rng.IntN(3000)) * time.Millisecond)
		path := []string{pathEx, pathRW}[rng.IntN(2)]
		cmd := s.zklockCmd(slot, "revoke", "--path", path)
		cmd.Run()
	}
}

// rejudge checks the history of a report directory again, with this
// checker: `zklock-robust judge DIR`. What zklock said is read again from
// each run's saved stderr. The checks after the run (znodes, processes)
// cannot be made again, and are not.
func rejudge(args []string) int {
	if len(args) != 1 {
		fmt.Fprintln(os.Stderr, "usage: zklock-robust judge DIR")
		return 2
	}
	s := &suite{dir: args[0]}
	return s.judge(nil)
}

// judge reads the history back, checks it, and writes the report.
func (s *suite) judge(leftovers []robust.Violation) int {
	f, err := os.Open(filepath.Join(s.dir, "history.jsonl"))
	if err != nil {
		fmt.Fprintln(os.Stderr, "zklock-robust:", err)
		return 2
	}
	defer f.Close()
	h, err := robust.ReadHistory(f)
	if err != nil {
		fmt.Fprintln(os.Stderr, "zklock-robust:", err)
		return 2
	}
	for i := range h.Runs {
		if b, err := os.ReadFile(filepath.Join(s.dir, "lives", h.Runs[i].ID+".stderr")); err == nil {
			said(&h.Runs[i], string(b))
		}
	}
	s.T = h.Session
	r := robust.Check(h, robust.Bounds{Progress: s.progress()})
	r.Violations = append(r.Violations, leftovers...)
	if err := writeReport(s.dir, h, r); err != nil {
		fmt.Fprintln(os.Stderr, "zklock-robust:", err)
		return 2
	}
	fmt.Print(summary(h, r))
	fmt.Printf("zklock-robust: report in %s\n", s.dir)
	if len(s.errs) > 0 {
		fmt.Fprintln(os.Stderr, "zklock-robust: the suite itself failed:", errors.Join(s.errs...))
		return 2
	}
	if len(r.Violations) > 0 {
		fmt.Printf("zklock-robust: FAIL: %d violations (seed %d)\n", len(r.Violations), h.Seed)
		return 1
	}
	fmt.Printf("zklock-robust: PASS (seed %d)\n", h.Seed)
	return 0
}

func names(wls []workload) string {
	var n []string
	for _, wl := range wls {
		n = append(n, wl.name)
	}
	return strings.Join(n, ",")
}

// pick parses a comma-separated choice among known ("all" and "none" too).
func pick(list, all, known string) ([]string, error) {
	switch list {
	case "all":
		return strings.Split(all, ","), nil
	case "none":
		return nil, nil
	}
	var out []string
	for _, n := range strings.Split(list, ",") {
		if !slices.Contains(strings.Split(known, ","), n) {
			return nil, fmt.Errorf("unknown %q (known: %s)", n, known)
		}
		out = append(out, n)
	}
	return out, nil
}
