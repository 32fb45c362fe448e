//go:build linux

package bench

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// holdScript is the holder's command in the handoff, memory and queue
// tests: it blocks until the driver opens and closes the FIFO ($0), then
// becomes the probe (its arguments), whose output is the moment the
// holder's command ends (the probe exits right after printing).
const holdScript = `read _ < "$0"; exec "$@"`

// holdOnlyScript blocks until released and prints nothing. `read` fails
// at end of file, which is what the release is, hence the `|| :`.
const holdOnlyScript = `read _ < "$0" || :`

// byClass picks the value for the tool's class: a native binary, a Python
// interpreter or a JVM, whose start-ups differ by orders of magnitude.
func byClass[T any](t *Tool, native, python, jvm T) T {
	switch t.Class {
	case "python":
		return python
	case "jvm":
		return jvm
	}
	return native
}

func settleFor(t *Tool) time.Duration {
	return byClass(t, 500*time.Millisecond, time.Second, 2*time.Second)
}

// fifoRelease opens the FIFO for writing and closes it, which ends the
// holder's `read`. Opening without a reader fails (ENXIO), so it retries
// until the holder's shell has opened its end.
func fifoRelease(ctx context.Context, fifo string, within time.Duration) error {
	deadline := time.Now().Add(within)
	for {
		f, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0)
		if err == nil {
			return f.Close()
		}
		if !errors.Is(err, syscall.ENXIO) {
			return err
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the holder never opened %s", fifo)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func makeFIFO(dir, name string) (string, error) {
	p := filepath.Join(dir, name)
	os.Remove(p)
	if err := syscall.Mkfifo(p, 0o600); err != nil {
		return "", fmt.Errorf("mkfifo %s: %w", p, err)
	}
	return p, nil
}

// readStamps reads the nanosecond timestamps printed by the probe, sorted.
func readStamps(path string) ([]int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []int64
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		s := strings.TrimSpace(sc.Text())
		if s == "" {
			continue
		}
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%s: unexpected line %q", path, s)
		}
		out = append(out, n)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out, sc.Err()
}

func stampGaps(stamps []int64) []float64 {
	var out []float64
	for i := 1; i < len(stamps); i++ {
		out = append(out, float64(stamps[i]-stamps[i-1])/1e6)
	}
	return out
}
