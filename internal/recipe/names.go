package recipe

import (
	"slices"
	"strconv"
	"strings"
)

// Kind is what a contender asks for.
type Kind int

const (
	// Exclusive contenders hold the lock alone. Unrecognised sequential
	// children that a session owns (see Queued) count as exclusive:
	// safety first.
	Exclusive Kind = iota
	// Shared contenders (read locks) may hold the lock together.
	Shared
	// SemaphoreLease is a semaphore lease (Curator InterProcessSemaphoreV2's
	// "-lease-" nodes under <path>/leases).
	SemaphoreLease
)

func (k Kind) String() string {
	switch k {
	case Shared:
		return "shared"
	case SemaphoreLease:
		return "lease"
	}
	return "exclusive"
}

// Flavor says which client library's naming a contender node follows.
type Flavor string

const (
	// FlavorCurator is Apache Curator's (and zklock's default) naming:
	// "_c_<uuid>-lock-<seq>", "_c_<uuid>-__WRIT__<seq>", "_c_<uuid>-__READ__<seq>".
	FlavorCurator Flavor = "curator"
	// FlavorCuratorRW is Curator InterProcessReadWriteLock's naming for
	// both kinds: "_c_<uuid>-__WRIT__<seq>" and "_c_<uuid>-__READ__<seq>".
	// Parsed nodes of that lock report FlavorCurator; this value only
	// selects the names zklock creates.
	FlavorCuratorRW Flavor = "curator-rw"
	// FlavorKazoo is Kazoo's naming: "<hex>__lock__<seq>", "<hex>__rlock__<seq>".
	FlavorKazoo Flavor = "kazoo"
	// FlavorUnknown is any other child ending in a sequence number.
	FlavorUnknown Flavor = "unknown"
)

// seqLen is the width of the server's sequence suffix: the parent's child
// version, a signed 32-bit counter, printed as %010d. After the counter
// wraps it is negative: "-000000001" is ten characters too, but
// -2147483648 to -1000000000 take eleven ("-2147483648").
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
	_, seq, ok := splitSeq(name)
	return seq, ok
}

// markers end the stems of the names zklock recognises; the sequence
// number follows them directly.
var markers = []string{"-lock-", "-__WRIT__", "-__READ__", "-lease-", "__lock__", "__rlock__"}

// splitSeq splits a child name into its stem and its sequence number. An
// eleven-character negative suffix is only read as one after a recognised
// marker, or where ten digits would not fit the counter: "-lock-1000000000"
// is the positive 1000000000 after the marker "-lock-", while
// "-lock--1000000000" is the negative one.
func splitSeq(name string) (stem string, seq int32, ok bool) {
	n := len(name)
	if n < seqLen {
		return "", 0, false
	}
	if n > seqLen && name[n-seqLen-1] == '-' && digits(name[n-seqLen:]) {
		long := name[n-seqLen-1:]
		v, err := strconv.ParseInt(long, 10, 32)
		_, shortErr := strconv.ParseInt(name[n-seqLen:], 10, 32)
		if err == nil && v <= -1e9 && (hasMarker(name[:n-seqLen-1]) || shortErr != nil) {
			return name[:n-seqLen-1], int32(v), true
		}
	}
	s := name[n-seqLen:]
	if !digits(strings.TrimPrefix(s, "-")) {
		return "", 0, false
	}
	v, err := strconv.ParseInt(s, 10, 32)
	if err != nil {
		return "", 0, false
	}
	return name[:n-seqLen], int32(v), true
}

func digits(s string) bool {
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

func hasMarker(stem string) bool {
	for _, m := range markers {
		if strings.HasSuffix(stem, m) {
			return true
		}
	}
	return false
}

// ParseContender classifies a child of a lock path. Children without a
// sequence suffix are not contenders.
func ParseContender(name string) (Contender, bool) {
	stem, seq, ok := splitSeq(name)
	if !ok {
		return Contender{}, false
	}
	c := Contender{Name: name, Seq: seq, Kind: Exclusive, Flavor: FlavorUnknown}
	switch {
	case strings.HasPrefix(name, curatorPrefix) && strings.HasSuffix(stem, "-lease-"):
		c.Flavor, c.Kind = FlavorCurator, SemaphoreLease
		c.GUID = stem[len(curatorPrefix) : len(stem)-len("-lease-")]
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
	slices.SortFunc(out, func(a, b Contender) int {
		switch {
		case a.Seq == b.Seq:
			return strings.Compare(a.Name, b.Name)
		case seqBefore(a.Seq, b.Seq):
			return -1
		}
		return 1
	})
	return out
}

// Holds reports whether the contender at index i of an ordered queue holds
// the lock: an exclusive one when it is first, a shared one when no
// exclusive contender is ahead of it. Anything but a shared contender counts
// as exclusive.
func Holds(q []Contender, i int) bool {
	if q[i].Kind != Shared {
		return i == 0
	}
	for _, c := range q[:i] {
		if c.Kind != Shared {
			return false
		}
	}
	return true
}

// family groups the names that one client library can see. A Curator
// InterProcessMutex sees only "-lock-" nodes, a Curator read-write lock only
// "__READ__"/"__WRIT__" nodes (it sorts anything else after its own), and
// Kazoo only "__lock__"/"__rlock__" nodes. zklock sees every family.
type family int

const (
	familyOther family = iota
	familyMutex
	familyRW
	familyKazoo
	familyLease
)

func (c Contender) family() family {
	stem, _, _ := splitSeq(c.Name)
	switch {
	case c.Kind == SemaphoreLease:
		return familyLease
	case c.Flavor == FlavorKazoo:
		return familyKazoo
	case c.Flavor == FlavorCurator && strings.HasSuffix(stem, "-lock-"):
		return familyMutex
	case c.Flavor == FlavorCurator:
		return familyRW
	}
	return familyOther
}

func (f family) String() string {
	switch f {
	case familyMutex:
		return "a Curator InterProcessMutex"
	case familyRW:
		return "a Curator InterProcessReadWriteLock"
	case familyKazoo:
		return "a Kazoo Lock/ReadLock/WriteLock"
	case familyLease:
		return "a Curator InterProcessSemaphoreV2"
	}
	return "an unknown client"
}

// nodeKind describes zklock's nodes of this family, for messages.
func (f family) nodeKind() string {
	switch f {
	case familyMutex:
		return `"-lock-"`
	case familyRW:
		return `"__READ__"/"__WRIT__"`
	case familyKazoo:
		return `"__lock__"/"__rlock__"`
	case familyLease:
		return `"-lease-"`
	}
	return "lock"
}

// flavorFor names the flavor that creates nodes of family f, or "" if
// none does.
func (f family) flavorFor() Flavor {
	switch f {
	case familyMutex:
		return FlavorCurator
	case familyRW:
		return FlavorCuratorRW
	case familyKazoo:
		return FlavorKazoo
	}
	return ""
}

// nodeStem is the name zklock gives its contender node, before the
// sequence number the server appends, for a flavor and kind. The GUID in it
// lets zklock find its node after a lost create reply.
func nodeStem(f Flavor, k Kind) string {
	switch {
	case f == FlavorKazoo:
		// Kazoo's own names are a bare uuid4 hex: 32 hex digits.
		id := strings.ReplaceAll(newUUID(), "-", "")
		if k == Shared {
			return id + "__rlock__"
		}
		return id + "__lock__"
	case k == SemaphoreLease:
		return curatorPrefix + newUUID() + "-lease-"
	case k == Shared:
		return curatorPrefix + newUUID() + "-__READ__"
	case f == FlavorCuratorRW:
		return curatorPrefix + newUUID() + "-__WRIT__"
	}
	return curatorPrefix + newUUID() + "-lock-"
}
