// Package bench measures zklock against its peers (flock(1), etcdctl lock,
// a Kazoo-based and a Curator-based runner) in one run, on loopback, and
// renders docs/benchmarks.md with SVG plots. Its command is
// internal/testkit/bench/cmd/zklock-bench; scripts/bench.sh is the way to run it,
// since it installs the dependencies and builds zklock first:
//
//	zklock-bench run    -zklock BIN [-zklock-build DESC] [-zklock-cgo BIN] [-stamp BIN] [-quick]
//	                    [-out DIR] [-logs DIR] [-md FILE] [-repro CMD] [-micro FILE]
//	zklock-bench report -in DIR/results.json [-md FILE] [-plots DIR]
//
// run starts its own ZooKeeper (internal/testkit/zktest) and etcd on free loopback
// ports, measures, writes DIR/results.json, then renders the report and its
// plots from that file, exactly as report does. The counts are set by
// environment variables (see config.go); -quick picks small ones for a
// smoke run.
//
// Measuring is Linux-only (parent-death signals, /proc, uname), and so is
// the command. Rendering is not: the statistics, the report template and
// the SVG plots build everywhere and are tested from a fixed results.json
// (testdata/) against golden files, without servers.
package bench
