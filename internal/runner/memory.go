package runner

import (
	"math"
	"os"
	"runtime/debug"
	"runtime/metrics"
)

// A run is short (a cron job's `run -- true` allocates about 3.5 MiB, three
// of them go-zookeeper's two connection buffers, and exits in milliseconds)
// or it waits (for hours, in a queue, allocating a few hundred bytes per
// ping). Go's default collector serves neither: the buffers alone bring the
// heap to the 4 MiB at which the first collection starts, which costs a
// short run a fifth of its instructions, and a collection in a waiting
// process touches a few hundred KiB of the collector's own metadata that
// the process then keeps. So a run starts with the collector off:
//
//   - while it connects and queues, the collector is off, with a memory
//     limit as the backstop for a huge queue listing (startupMemoryLimit);
//   - once it waits, the limit becomes what it has mapped plus
//     waitHeadroom: a waiter never collects unless it allocates that much
//     more, which its pings take days to do, and its memory is bounded;
//   - once the command has run for a while (settleDelay), the default
//     collector is back, for a holder that runs for hours.
//
// GOGC or GOMEMLIMIT in the environment leave all of this to the user.

// startupMemoryLimit bounds the memory of a run whose collector is off
// before it settles; the runtime collects when it is reached.
const startupMemoryLimit = 64 << 20

// waitHeadroom is what a waiting run may allocate before it collects.
const waitHeadroom = 4 << 20

// gcPolicy applies the above; its zero value (GOGC or GOMEMLIMIT set)
// leaves the collector alone.
type gcPolicy struct {
	managed bool
	percent int // the collector's setting to go back to
}

// quietGC turns the collector off for the start of a run.
func quietGC() gcPolicy {
	for _, v := range []string{"GOGC", "GOMEMLIMIT"} {
		if _, set := os.LookupEnv(v); set {
			return gcPolicy{}
		}
	}
	debug.SetMemoryLimit(startupMemoryLimit)
	return gcPolicy{managed: true, percent: debug.SetGCPercent(-1)}
}

// waiting bounds a waiting run's memory near what it has now.
func (g gcPolicy) waiting() {
	if g.managed {
		debug.SetMemoryLimit(mapped() + waitHeadroom)
	}
}

// holding gives a holder whose command runs on the default collector.
func (g gcPolicy) holding() {
	if g.managed {
		debug.SetMemoryLimit(math.MaxInt64)
		debug.SetGCPercent(g.percent)
	}
}

// mapped is the memory that the runtime's memory limit counts: all it has
// mapped, less the heap it has given back to the system. Read through
// runtime/metrics: runtime.ReadMemStats would flush every cache of heap
// spans, and a waiter would then touch fresh ones, some 300 KiB more.
func mapped() int64 {
	s := []metrics.Sample{{Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/released:bytes"}}
	metrics.Read(s)
	return int64(s[0].Value.Uint64() - s[1].Value.Uint64())
}
