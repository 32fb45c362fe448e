package recipe

// Micro-benchmarks for the lock package's hot paths that need no server:
// every wake-up of a waiter parses and orders the lock path's children.
// Run them with
//
//	go test -short -run '^$' -bench . -benchmem ./lock
//
// (no benchmark here starts a server).

import (
	"fmt"
	"math/rand"
	"strconv"
	"testing"
)

// benchUUID makes a deterministic, well-formed UUID string for index i.
func benchUUID(r *rand.Rand) string {
	var b [16]byte
	r.Read(b[:])
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// mixedChildren returns n children of a lock path in every naming the
// package recognises (Curator/zklock mutex, write and read locks; Kazoo
// locks and read locks; other sequential names) plus a few non-contenders,
// in a shuffled order as the server returns them (it does not sort).
func mixedChildren(n int) []string {
	r := rand.New(rand.NewSource(1))
	out := make([]string, 0, n)
	for i := 0; len(out) < n; i++ {
		seq := fmt.Sprintf("%010d", i)
		var name string
		switch i % 8 {
		case 0, 1, 2: // zklock's own (and Curator InterProcessMutex) names dominate
			name = "_c_" + benchUUID(r) + "-lock-" + seq
		case 3:
			name = "_c_" + benchUUID(r) + "-__WRIT__" + seq
		case 4:
			name = "_c_" + benchUUID(r) + "-__READ__" + seq
		case 5:
			name = fmt.Sprintf("%032x", r.Uint64()) + "__lock__" + seq
		case 6:
			name = fmt.Sprintf("%032x", r.Uint64()) + "__rlock__" + seq
		case 7:
			if i%64 == 7 {
				name = "leases" + strconv.Itoa(i) // not a contender
			} else {
				name = "member-" + seq
			}
		}
		out = append(out, name)
	}
	r.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out
}

var (
	sinkContenders []Contender
	sinkContender  Contender
	sinkBool       bool
)

// BenchmarkContenders is the work a waiter does on every wake-up with a
// queue of 10,000: parse every child and sort the contenders into queue order.
func BenchmarkContenders(b *testing.B) {
	for _, n := range []int{10, 1000, 10000} {
		children := mixedChildren(n)
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				sinkContenders = Contenders(children)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/child")
		})
	}
}

// BenchmarkContendersFind adds the linear search for our own node that the
// wait loop does after ordering the queue.
func BenchmarkContendersFind(b *testing.B) {
	children := mixedChildren(10000)
	q := Contenders(children)
	mine := q[len(q)/2].Name
	b.ReportAllocs()
	for b.Loop() {
		q := Contenders(children)
		idx := -1
		for i := range q {
			if q[i].Name == mine {
				idx = i
				break
			}
		}
		sinkBool = idx >= 0 && Holds(q, idx)
	}
}

func BenchmarkParseContender(b *testing.B) {
	const uuid = "2f1c0c5e-8b5e-4c1e-9b0e-1a2b3c4d5e6f"
	const hex = "0123456789abcdef0123456789abcdef"
	names := []struct{ label, name string }{
		{"curator-lock", "_c_" + uuid + "-lock-0000000007"},
		{"curator-write", "_c_" + uuid + "-__WRIT__0000000007"},
		{"curator-read", "_c_" + uuid + "-__READ__0000000007"},
		{"kazoo-lock", hex + "__lock__0000000007"},
		{"kazoo-rlock", hex + "__rlock__0000000007"},
		{"unknown", "member-0000000007"},
		{"not-a-contender", "leases"},
	}
	for _, tt := range names {
		b.Run(tt.label, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				sinkContender, sinkBool = ParseContender(tt.name)
			}
		})
	}
}
