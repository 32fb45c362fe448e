package recipe

import (
	"time"

	"github.com/go-zookeeper/zk"
)

// ServerTime is a time on the ensemble's clock, read off a write: the
// node's mtime, which the leader sets from its own wall clock when it
// proposes the write, and the epoch of that leader, the high 32 bits of
// the write's zxid. Every election starts a new epoch, so two times of one
// epoch were read off one server's clock, and their difference is exact
// whatever that clock's offset; two times of different epochs may come
// from two servers whose clocks disagree.
type ServerTime struct {
	At    time.Time
	Epoch uint32
}

// Modified is the ServerTime of the last write to the node whose stat is
// st.
func Modified(st *zk.Stat) ServerTime {
	return ServerTime{At: time.UnixMilli(st.Mtime).UTC(), Epoch: uint32(uint64(st.Mzxid) >> 32)}
}
