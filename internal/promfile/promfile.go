// Package promfile keeps zklock's run metrics in a file for node_exporter's
// textfile collector, in the Prometheus text format: one file that any
// number of runs, of any lock paths, update in turn.
//
// A run rewrites the whole file: it reads the series already there, adds
// its own, writes a temporary file in the same directory and renames it
// into place, so the collector never reads half a file. Counters survive
// from run to run this way, and so does the last success of a path whose
// run failed. Two runs that end at once must not both read the old file
// and lose one increment: each holds an exclusive kernel lock (flock(2)) on
// a sidecar file for the read, the add and the rename. The sidecar is
// never removed: a lock file that is removed and made again would let a
// run lock the old one while another locks the new.
package promfile

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/zklock/zklock/internal/files"
)

// Outcomes are the values of zklock_runs_total's outcome label. Each path
// gets a series for every one of them, at 0 until it happens, so that a
// rate over the first failure is not lost to a series that appeared with
// it.
var Outcomes = []string{"success", "failure", "busy", "skipped", "superseded", "outdated", "lost", "possible_overlap", "revoked", "timeout", "interrupted", "error"}

// Run is what one run or tryrun did.
type Run struct {
	// Paths are the run's lock paths in sorted order; the first names the
	// job.
	Paths    []string
	End      time.Time
	ExitCode int
	Outcome  string // one of Outcomes
	// Wait is how long it waited for the locks; Hold how long it held
	// them, when Held.
	Wait time.Duration
	Hold time.Duration
	Held bool
	// Resources are the pool members the run held, sorted; none outside
	// a pool. Each gets its own last-hold series, labelled resource, so
	// a dashboard sees which member a pool's job last held and for how
	// long.
	Resources []string
}

// A family of series, as the file writes it.
type family struct {
	name, kind, help string
}

// The families, in the order the file lists them. Each series is labelled
// with path; runs_total with outcome too.
var (
	lastRun     = family{"zklock_last_run_timestamp_seconds", "gauge", "When the last run of the job whose first lock path is path ended, in seconds since the epoch."}
	lastSuccess = family{"zklock_last_success_timestamp_seconds", "gauge", "When the last run of the job whose first lock path is path that exited 0 ended, in seconds since the epoch; kept when a later run fails or is skipped."}
	lastExit    = family{"zklock_last_exit_code", "gauge", "The exit code of the last run of the job whose first lock path is path."}
	lastWait    = family{"zklock_last_wait_seconds", "gauge", "How long the last run that asked for path waited for its locks."}
	lastHold    = family{"zklock_last_hold_seconds", "gauge", "How long the last run that held path held its locks; for a pool, labelled with the member (resource) it held."}
	runsTotal   = family{"zklock_runs_total", "counter", "Runs of the job whose first lock path is path, by outcome."}
	families    = []family{lastRun, lastSuccess, lastExit, lastWait, lastHold, runsTotal}
)

// lockWait bounds waiting for the sidecar's lock while no other run
// replaces the file: runs that end together hold it a few milliseconds
// each, so only a stuck writer makes it run out.
const lockWait = 5 * time.Second

// Record adds r to the file at name, creating it if need be; where it
// may be written is place_unix.go's to say.
func Record(name string, r Run) error {
	if len(r.Paths) == 0 {
		return errors.New("no lock path to label the series with")
	}
	p, err := locate(name)
	if err != nil {
		return err
	}
	defer p.close()
	unlock, err := p.lockSidecar()
	if err != nil {
		return err
	}
	defer unlock()
	s, err := p.read()
	if err != nil {
		return err
	}
	s.add(r)
	s.trim(maxPaths)
	return p.write(s.text())
}

// series holds every sample of the file: the value of each series by
// family and label set.
type series map[string]map[labels]float64

// labels is a series' label set: path, for runs_total the outcome, and
// for a pool member's last hold the resource.
type labels struct{ path, outcome, resource string }

func (s series) set(f family, l labels, v float64) {
	if s[f.name] == nil {
		s[f.name] = map[labels]float64{}
	}
	s[f.name][l] = v
}

// pathLabel is a lock path as a label value. The text format's label
// values are UTF-8, and one that is not makes the collector reject the
// whole file. Runs refused for such a path record nothing, but a path
// that is not UTF-8 is still written without loss, so that two such paths
// never share a label: each byte that is not UTF-8 becomes U+FFFD and
// "x" and its two hex digits, and a U+FFFD of the path becomes U+FFFD and
// "u". ZooKeeper refuses U+FFFD in a path, so the label of a path it
// takes is the path itself.
func pathLabel(p string) string {
	if utf8.ValidString(p) && !strings.ContainsRune(p, utf8.RuneError) {
		return p
	}
	var b strings.Builder
	for i := 0; i < len(p); {
		r, n := utf8.DecodeRuneInString(p[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, "\uFFFDx%02x", p[i])
		case r == utf8.RuneError:
			b.WriteString("\uFFFDu")
		default:
			b.WriteString(p[i : i+n])
		}
		i += n
	}
	return b.String()
}

// maxPaths caps the lock paths the file keeps series for: at about
// 1.5 KiB each, some 7 MiB, well below what files.Metrics reads. Past it,
// the paths whose job ran longest ago go (docs/guide/metrics.md).
const maxPaths = 5000

// trim drops the series of the paths whose last run is oldest until at
// most max paths remain. A path that only ever was a job's second or
// later lock path has no last run of its own and goes first.
func (s series) trim(max int) {
	last := map[string]float64{}
	for _, f := range families {
		for l := range s[f.name] {
			if _, ok := last[l.path]; !ok {
				last[l.path] = -1
			}
		}
	}
	if len(last) <= max {
		return
	}
	for l, v := range s[lastRun.name] {
		last[l.path] = v
	}
	paths := make([]string, 0, len(last))
	for p := range last {
		paths = append(paths, p)
	}
	sort.Slice(paths, func(i, j int) bool {
		if last[paths[i]] != last[paths[j]] {
			return last[paths[i]] < last[paths[j]]
		}
		return paths[i] < paths[j]
	})
	drop := map[string]bool{}
	for _, p := range paths[:len(paths)-max] {
		drop[p] = true
	}
	for _, f := range families {
		for l := range s[f.name] {
			if drop[l.path] {
				delete(s[f.name], l)
			}
		}
	}
}

func (s series) add(r Run) {
	job := pathLabel(r.Paths[0])
	end := seconds(r.End)
	s.set(lastRun, labels{path: job}, end)
	s.set(lastExit, labels{path: job}, float64(r.ExitCode))
	if r.Outcome == "success" {
		s.set(lastSuccess, labels{path: job}, end)
	}
	for _, p := range r.Paths {
		p = pathLabel(p)
		s.set(lastWait, labels{path: p}, r.Wait.Seconds())
		if r.Held {
			s.set(lastHold, labels{path: p}, r.Hold.Seconds())
		}
	}
	if r.Held {
		for _, m := range r.Resources {
			s.set(lastHold, labels{path: job, resource: pathLabel(m)}, r.Hold.Seconds())
		}
	}
	for _, o := range Outcomes {
		l := labels{path: job, outcome: o}
		v := s[runsTotal.name][l]
		if o == r.Outcome {
			v++
		}
		s.set(runsTotal, l, v)
	}
}

// seconds is a time as Prometheus writes one: seconds since the epoch, to
// the millisecond.
func seconds(t time.Time) float64 { return float64(t.UnixMilli()) / 1000 }

// read reads the file's series. A missing file has none; lines of other
// families, and lines that do not parse, are dropped (the file is
// zklock's, and rewritten whole). It is read as every file zklock is
// given: a FIFO or a device named *.prom is refused, not waited on or
// read forever.
func (p *place) read() (series, error) {
	data, err := files.Metrics.ReadAt(p.dir, p.base, filepath.Join(p.dirName(), p.base))
	if errors.Is(err, fs.ErrNotExist) {
		return series{}, nil
	}
	if err != nil {
		return nil, err
	}
	return parse(data)
}

// parse reads the series of a file's content.
func parse(data []byte) (series, error) {
	s := series{}
	known := map[string]family{}
	for _, f := range families {
		known[f.name] = f
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		name, l, v, ok := parseSample(sc.Text())
		if f, known := known[name]; ok && known {
			// A label read back is a label already, unless an older
			// zklock wrote it as bytes that are not UTF-8.
			if !utf8.ValidString(l.path) {
				l.path = pathLabel(l.path)
			}
			if !utf8.ValidString(l.resource) {
				l.resource = pathLabel(l.resource)
			}
			s.set(f, l, v)
		}
	}
	return s, sc.Err()
}

// parseSample reads one sample line as write writes it:
// name{path="…",outcome="…",resource="…"} value.
func parseSample(line string) (name string, l labels, v float64, ok bool) {
	open := strings.IndexByte(line, '{')
	if open <= 0 || strings.HasPrefix(line, "#") {
		return "", l, 0, false
	}
	name, rest := line[:open], line[open+1:]
	for !strings.HasPrefix(rest, "}") {
		eq := strings.Index(rest, `="`)
		if eq < 0 {
			return "", l, 0, false
		}
		key := rest[:eq]
		val, n, good := unquote(rest[eq+2:])
		if !good {
			return "", l, 0, false
		}
		switch key {
		case "path":
			l.path = val
		case "outcome":
			l.outcome = val
		case "resource":
			l.resource = val
		}
		rest = strings.TrimPrefix(rest[eq+2+n:], ",")
	}
	v, err := strconv.ParseFloat(strings.TrimSpace(rest[1:]), 64)
	return name, l, v, err == nil
}

// unquote reads a label value up to its closing quote: the text format
// escapes only backslash, double quote and newline. n counts what was
// read, the closing quote included.
func unquote(s string) (val string, n int, ok bool) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '"':
			return b.String(), i + 1, true
		case '\\':
			if i+1 == len(s) {
				return "", 0, false
			}
			i++
			switch s[i] {
			case 'n':
				b.WriteByte('\n')
			default:
				b.WriteByte(s[i])
			}
		default:
			b.WriteByte(c)
		}
	}
	return "", 0, false
}

var quoter = strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)

// text is the file's content: each family with samples, its HELP and TYPE
// lines, and its series sorted by their labels.
func (s series) text() []byte {
	var b bytes.Buffer
	for _, f := range families {
		if len(s[f.name]) == 0 {
			continue
		}
		fmt.Fprintf(&b, "# HELP %s %s\n# TYPE %s %s\n", f.name, f.help, f.name, f.kind)
		ls := make([]labels, 0, len(s[f.name]))
		for l := range s[f.name] {
			ls = append(ls, l)
		}
		sort.Slice(ls, func(i, j int) bool {
			if ls[i].path != ls[j].path {
				return ls[i].path < ls[j].path
			}
			if ls[i].outcome != ls[j].outcome {
				return ls[i].outcome < ls[j].outcome
			}
			return ls[i].resource < ls[j].resource
		})
		for _, l := range ls {
			fmt.Fprintf(&b, `%s{path="%s"`, f.name, quoter.Replace(l.path))
			if l.outcome != "" {
				fmt.Fprintf(&b, `,outcome="%s"`, quoter.Replace(l.outcome))
			}
			if l.resource != "" {
				fmt.Fprintf(&b, `,resource="%s"`, quoter.Replace(l.resource))
			}
			fmt.Fprintf(&b, "} %s\n", strconv.FormatFloat(s[f.name][l], 'f', -1, 64))
		}
	}
	return b.Bytes()
}
