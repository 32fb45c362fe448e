//go:build linux

package bench

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"
	"runtime"
	"syscall"
)

func init() {
	// Servers and tool processes are started with a parent-death signal,
	// which the kernel sends when the *thread* that forked them exits. The
	// main goroutine stays on the main thread for the life of the process,
	// and every long-lived child is forked from it.
	runtime.LockOSThread()
}

// Main runs the driver with the command line args (without the program
// name) and returns the process's exit code: 0, 1 for a failed run, 2 for
// a usage error.
func Main(args []string) int {
	if len(args) < 1 {
		return usage()
	}
	var err error
	switch args[0] {
	case "run":
		err = cmdRun(args[1:])
	case "report":
		err = cmdReport(args[1:])
	default:
		return usage()
	}
	switch {
	case errors.Is(err, flag.ErrHelp):
		return 2
	case err != nil:
		fmt.Fprintln(os.Stderr, "zklock-bench:", err)
		return 1
	}
	return 0
}

func usage() int {
	fmt.Fprintln(os.Stderr, "usage: zklock-bench run -zklock BIN [-quick] [-out DIR] [-logs DIR] [-md FILE] [-repro CMD] [-phases REGEXP]\n       zklock-bench report -in results.json [-md FILE] [-plots DIR]")
	return 2
}

func cmdRun(args []string) error {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	zklockBin := fs.String("zklock", "", "the zklock binary to measure (required)")
	zklockBuild := fs.String("zklock-build", "", "how -zklock was built, for the report")
	zklockCgo := fs.String("zklock-cgo", "", "optional: a cgo (plain `go build`) zklock, timed uncontended only for comparison")
	quick := fs.Bool("quick", false, "small counts: a smoke run, not numbers to publish")
	out := fs.String("out", "docs/benchmarks", "directory for results.json and the plots")
	logs := fs.String("logs", "", "directory for the servers' and tools' logs (default: OUT/logs)")
	md := fs.String("md", "docs/benchmarks.md", "the Markdown report to write (empty: none)")
	repro := fs.String("repro", "scripts/bench.sh", "the command that reproduces this run, for the report")
	micro := fs.String("micro", "", "output of the lock package's `go test -bench` run, to include in the report")
	stamp := fs.String("stamp", "", "optional: the handoff probe built from internal/testkit/bench/stamp/stamp.c (default: date +%s%N)")
	phases := fs.String("phases", "", "optional: measure only the phases whose name matches this regular expression (a focused run; its report lacks the others)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *zklockBin == "" {
		return errors.New("run: -zklock is required")
	}
	bin, err := filepath.Abs(*zklockBin)
	if err != nil {
		return err
	}
	cfg, err := loadConfig(*quick)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()

	logDir := *logs
	if logDir == "" {
		logDir = filepath.Join(*out, "logs")
	}
	cgoBin := ""
	if *zklockCgo != "" {
		if cgoBin, err = filepath.Abs(*zklockCgo); err != nil {
			return err
		}
	}
	stampBin := ""
	if *stamp != "" {
		if stampBin, err = filepath.Abs(*stamp); err != nil {
			return err
		}
	}
	var only *regexp.Regexp
	if *phases != "" {
		if only, err = regexp.Compile(*phases); err != nil {
			return fmt.Errorf("run: -phases: %w", err)
		}
	}
	res, err := runAll(ctx, cfg, inputs{Zklock: bin, ZklockCgo: cgoBin, ZklockBuild: *zklockBuild,
		Stamp: stampBin, LogDir: logDir, Repro: *repro, Phases: only})
	if err != nil {
		// Keep what was measured for a look, but away from the published
		// results, which an interrupted run must not replace.
		if res != nil {
			partial := filepath.Join(logDir, "results.partial.json")
			if writeResults(partial, res) == nil {
				fmt.Fprintln(os.Stderr, "zklock-bench: partial results in", partial)
			}
		}
		return err
	}
	if *micro != "" {
		b, err := os.ReadFile(*micro)
		if err != nil {
			return err
		}
		res.Micro = filterBench(string(b))
	}
	if err := writeResults(filepath.Join(*out, "results.json"), res); err != nil {
		return err
	}
	return render(res, *md, *out)
}

func cmdReport(args []string) error {
	fs := flag.NewFlagSet("report", flag.ContinueOnError)
	in := fs.String("in", "docs/benchmarks/results.json", "results written by bench run")
	md := fs.String("md", "docs/benchmarks.md", "the Markdown report to write")
	plots := fs.String("plots", "", "directory for the SVG plots (default: the directory of -in)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	res, err := readResults(*in)
	if err != nil {
		return err
	}
	dir := *plots
	if dir == "" {
		dir = filepath.Dir(*in)
	}
	return render(res, *md, dir)
}
