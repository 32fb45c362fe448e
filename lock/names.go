package lock

import (
	"sort"
	"strconv"
	"strings"
)

// Kind is what a contender asks for.
type Kind int

const (
	// Exclusive contenders hold the lock alone. Unrecognised sequential
	// children count as exclusive: safety first.
	Exclusive Kind = iota
	// Shared contenders (read locks) may hold the lock together.
	Shared
)

func (k Kind) String() string {
	if k == Shared {
		return "shared"
	}
	return "exclusive"
}

// Flavor says which client library's naming a contender node follows.
type Flavor string

const (
	// FlavorCurator is Apache Curator's (and zklock's default) naming:
	// "_c_<uuid>-lock-<seq>", "_c_<uuid>-__WRIT__<seq>", "_c_<uuid>-__READ__<seq>".
	FlavorCurator Flavor = "curator"
	// FlavorKazoo is Kazoo's naming: "<hex>__lock__<seq>", "<hex>__rlock__<seq>".
	FlavorKazoo Flavor = "kazoo"
	// FlavorUnknown is any other child ending in a sequence number.
	FlavorUnknown Flavor = "unknown"
)

// seqLen is the width of the server's sequence suffix: a signed 32-bit
// counter printed as %010d, so "-000000001" after it wraps.
const seqLen = 10

// Contender is one sequential child of a lock path.
type Contender struct {
	Name   string // the child's name
	Seq    int32  // its sequence number
	Kind   Kind
	Flavor Flavor
	// GUID is the protection prefix's id, when the name has one.
	GUID string
}

// curatorPrefix starts every protected name that Curator (and zklock) makes.
const curatorPrefix = "_c_"

// ParseSeq parses the trailing sequence number of a child name.
func ParseSeq(name string) (int32, bool) {
	if len(name) < seqLen {
		return 0, false
	}
	s := name[len(name)-seqLen:]
	for i, r := range s {
		if (r < '0' || r > '9') && !(i == 0 && r == '-') {
			return 0, false
		}
	}
	n, err := strconv.ParseInt(s, 10, 32)
	if err != nil {
		return 0, false
	}
	return int32(n), true
}

// ParseContender classifies a child of a lock path. Children without a
// sequence suffix are not contenders.
func ParseContender(name string) (Contender, bool) {
	seq, ok := ParseSeq(name)
	if !ok {
		return Contender{}, false
	}
	c := Contender{Name: name, Seq: seq, Kind: Exclusive, Flavor: FlavorUnknown}
	stem := name[:len(name)-seqLen]
	switch {
	case strings.HasPrefix(name, curatorPrefix) && (strings.HasSuffix(stem, "-lock-") ||
		strings.HasSuffix(stem, "-__WRIT__") || strings.HasSuffix(stem, "-__READ__")):
		c.Flavor = FlavorCurator
		if g, _, ok := strings.Cut(name[len(curatorPrefix):], "-lock-"); ok && strings.HasSuffix(stem, "-lock-") {
			c.GUID = g
		} else {
			c.GUID = stem[len(curatorPrefix) : len(stem)-len("-__WRIT__")]
		}
		if strings.HasSuffix(stem, "-__READ__") {
			c.Kind = Shared
		}
	case strings.HasSuffix(stem, "__lock__"):
		c.Flavor = FlavorKazoo
		c.GUID = strings.TrimSuffix(stem, "__lock__")
	case strings.HasSuffix(stem, "__rlock__"):
		c.Flavor = FlavorKazoo
		c.GUID = strings.TrimSuffix(stem, "__rlock__")
		c.Kind = Shared
	}
	return c, true
}

// seqBefore orders sequence numbers with serial-number arithmetic, so the
// order survives the counter wrapping from 2147483647 to -2147483648 as long
// as the live contenders span less than 2^31 creations.
func seqBefore(a, b int32) bool { return int32(uint32(a)-uint32(b)) < 0 }

// Contenders parses children and returns the contenders in queue order.
func Contenders(children []string) []Contender {
	out := make([]Contender, 0, len(children))
	for _, name := range children {
		if c, ok := ParseContender(name); ok {
			out = append(out, c)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Seq != out[j].Seq {
			return seqBefore(out[i].Seq, out[j].Seq)
		}
		return out[i].Name < out[j].Name
	})
	return out
}

// Holds reports whether the contender at index i of an ordered queue holds
// the lock: an exclusive one when it is first, a shared one when no
// exclusive contender is ahead of it.
func Holds(q []Contender, i int) bool {
	if q[i].Kind == Exclusive {
		return i == 0
	}
	for _, c := range q[:i] {
		if c.Kind == Exclusive {
			return false
		}
	}
	return true
}
