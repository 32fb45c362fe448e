//go:build linux

package bench

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

func measureMemory(ctx context.Context, e *env, cfg Config, tools []*Tool, res *Results) error {
	dir, err := os.MkdirTemp(filepath.Dir(e.lockDir), "memory-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	for _, t := range tools {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		m := MemoryResult{Tool: t.Key}
		if err := memoryOne(ctx, e, t, dir, &m); err != nil {
			m.Error = err.Error()
		}
		res.Memory = append(res.Memory, m)
		logf("   %-20s waiting: VmRSS %6.1f MiB (peak %.1f MiB, %s), Pss %.1f MiB, Private_Dirty %.2f MiB%s", t.Name,
			float64(m.RSSKiB)/1024, float64(m.HWMKiB)/1024, processes(m.Processes), float64(m.PssKiB)/1024, float64(m.PrivateKiB)/1024, errSuffix(m.Error))
	}
	return nil
}

func memoryOne(ctx context.Context, e *env, t *Tool, dir string, m *MemoryResult) error {
	const label = "memory"
	fifo, err := makeFIFO(dir, t.Key+".fifo")
	if err != nil {
		return err
	}
	logName := "memory-" + t.Key + ".log"
	holder, err := e.spawn(ctx, t, t.Argv(label, e.shBin, "-c", holdOnlyScript, fifo), nil, nil, logName)
	if err != nil {
		return err
	}
	procs := []*proc{holder}
	finish := func() error {
		rerr := fifoRelease(ctx, fifo, 10*time.Second)
		var firstErr error
		for _, p := range procs {
			if rerr != nil {
				p.cmd.Process.Signal(syscall.SIGTERM)
			}
			if _, err := p.wait(); err != nil && firstErr == nil {
				firstErr = err
			}
		}
		return errors.Join(rerr, firstErr)
	}
	if err := waitCount(ctx, t, label, 1, time.Minute); err != nil {
		return errors.Join(err, finish())
	}
	waiter, err := e.spawn(ctx, t, t.Argv(label, e.trueBin), nil, nil, logName)
	if err != nil {
		return errors.Join(err, finish())
	}
	procs = append(procs, waiter)
	if err := waitCount(ctx, t, label, 2, time.Minute); err != nil {
		return errors.Join(err, finish())
	}
	time.Sleep(2 * settleFor(t))
	m.RSSKiB, m.HWMKiB, m.Processes = procRSS(waiter.cmd.Process.Pid)
	m.PssKiB = procPss(waiter.cmd.Process.Pid)
	m.PrivateKiB, _ = procPrivate(waiter.cmd.Process.Pid)
	return finish()
}
