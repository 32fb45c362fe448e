package zkconn

import (
	"errors"
	"fmt"
	"testing"

	"github.com/go-zookeeper/zk"
	"github.com/zklock/zklock/internal/testkit/zktest"
)

// TestValidatePathMatchesServer: for a character on each side of every
// boundary of the server's rules, ValidatePath accepts exactly what a real
// server lets a client create. Characters beyond U+FFFF (an emoji) are
// refused by the server, which sees them as surrogate pairs.
func TestValidatePathMatchesServer(t *testing.T) {
	conn := zktest.DialT(t, server(t).Addrs())
	base := zktest.TestPath(t, "/vp")
	for _, p := range []string{"/vp", base} {
		if _, err := conn.CreateContainer(p, nil, zk.FlagContainer, zk.WorldACL(zk.PermAll)); err != nil && !errors.Is(err, zk.ErrNodeExists) {
			t.Fatal(err)
		}
	}
	for _, r := range []rune{0x01, 0x1f, 0x20, 0x7e, 0x7f, 0x9f, 0xa0, 0xd7ff, 0xf8ff, 0xf900,
		0xffef, 0xfff0, 0xfffe, 0xffff, 0x10000, 0x1f600, 0x10ffff} {
		p := fmt.Sprintf("%s/c%c", base, r)
		_, err := conn.Create(p, nil, zk.FlagEphemeral, zk.WorldACL(zk.PermAll))
		serverOK := err == nil
		if err != nil && !errors.Is(err, zk.ErrBadArguments) && !errors.Is(err, zk.ErrInvalidPath) {
			t.Fatalf("create with %U: %v", r, err)
		}
		if ours := ValidatePath(p) == nil; ours != serverOK {
			t.Errorf("%U: ValidatePath accepts it: %v, the server: %v (%v)", r, ours, serverOK, err)
		}
	}
}
