// Command bench measures zklock against its peers (flock(1), etcdctl lock,
// a Kazoo-based and a Curator-based runner) in one run, on loopback, and
// renders docs/benchmarks.md with SVG plots. scripts/bench.sh is the way to
// run it; it installs the dependencies and builds zklock first.
//
//	go run ./bench run    -zklock BIN [-zklock-build DESC] [-zklock-cgo BIN] [-stamp BIN] [-quick]
//	                      [-out DIR] [-logs DIR] [-md FILE] [-repro CMD] [-micro FILE]
//	go run ./bench report -in DIR/results.json [-md FILE] [-plots DIR]
//
// run starts its own ZooKeeper (internal/zktest) and etcd on free loopback
// ports, measures, writes DIR/results.json, then renders the report and its
// plots from that file, exactly as report does. Nothing here is part of
// `go test ./...`: the package has no tests.
//
// The counts are set by environment variables (see config.go); -quick picks
// small ones for a smoke run.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
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

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	var err error
	switch os.Args[1] {
	case "run":
		err = cmdRun(os.Args[2:])
	case "report":
		err = cmdReport(os.Args[2:])
	default:
		usage()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: bench run -zklock BIN [-quick] [-out DIR] [-logs DIR] [-md FILE] [-repro CMD]\n       bench report -in results.json [-md FILE] [-plots DIR]")
	os.Exit(2)
}

func cmdRun(args []string) error {
	fs := flag.NewFlagSet("run", flag.ExitOnError)
	zklockBin := fs.String("zklock", "", "the zklock binary to measure (required)")
	zklockBuild := fs.String("zklock-build", "", "how -zklock was built, for the report")
	zklockCgo := fs.String("zklock-cgo", "", "optional: a cgo (plain `go build`) zklock, timed uncontended only for comparison")
	quick := fs.Bool("quick", false, "small counts: a smoke run, not numbers to publish")
	out := fs.String("out", "docs/benchmarks", "directory for results.json and the plots")
	logs := fs.String("logs", "", "directory for the servers' and tools' logs (default: OUT/logs)")
	md := fs.String("md", "docs/benchmarks.md", "the Markdown report to write (empty: none)")
	repro := fs.String("repro", "scripts/bench.sh", "the command that reproduces this run, for the report")
	micro := fs.String("micro", "", "output of the lock package's `go test -bench` run, to include in the report")
	stamp := fs.String("stamp", "", "optional: the handoff probe built from bench/stamp/stamp.c (default: date +%s%N)")
	fs.Parse(args)
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
	res, err := runAll(ctx, cfg, inputs{Zklock: bin, ZklockCgo: cgoBin, ZklockBuild: *zklockBuild,
		Stamp: stampBin, LogDir: logDir, Repro: *repro})
	if err != nil {
		// Keep what was measured for a look, but away from the published
		// results, which an interrupted run must not replace.
		if res != nil {
			partial := filepath.Join(logDir, "results.partial.json")
			if writeResults(partial, res) == nil {
				fmt.Fprintln(os.Stderr, "bench: partial results in", partial)
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
	fs := flag.NewFlagSet("report", flag.ExitOnError)
	in := fs.String("in", "docs/benchmarks/results.json", "results written by bench run")
	md := fs.String("md", "docs/benchmarks.md", "the Markdown report to write")
	plots := fs.String("plots", "", "directory for the SVG plots (default: the directory of -in)")
	fs.Parse(args)
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
