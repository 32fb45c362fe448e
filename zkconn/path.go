package zkconn

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// ErrBadPath marks a znode path that ZooKeeper (or zklock) would refuse.
var ErrBadPath = errors.New("bad path")

// ValidatePath checks an absolute znode path the way the server would, and
// refuses anything under /zookeeper, ZooKeeper's own reserved tree. The root
// is a valid path; what may be a lock is the lock package's rule.
func ValidatePath(p string) error {
	switch {
	case p == "":
		return fmt.Errorf("%w: empty", ErrBadPath)
	case p[0] != '/':
		return fmt.Errorf("%w: %q is relative; lock paths start with /", ErrBadPath, p)
	case p == "/":
		return nil
	case strings.HasSuffix(p, "/"):
		return fmt.Errorf("%w: %q ends with /", ErrBadPath, p)
	case p == "/zookeeper" || strings.HasPrefix(p, "/zookeeper/"):
		return fmt.Errorf("%w: %q is under /zookeeper, which the server reserves", ErrBadPath, p)
	}
	if !utf8.ValidString(p) {
		return fmt.Errorf("%w: %q is not valid UTF-8", ErrBadPath, p)
	}
	for _, comp := range strings.Split(p[1:], "/") {
		switch comp {
		case "":
			return fmt.Errorf("%w: %q has an empty component", ErrBadPath, p)
		case ".", "..":
			return fmt.Errorf("%w: %q has a %q component", ErrBadPath, p, comp)
		}
	}
	for _, r := range p {
		// The server rejects these code points (PathUtils.validatePath).
		// It sees the path as a Java string, where a character beyond
		// U+FFFF (an emoji) is a pair of surrogates in U+D800–U+DFFF,
		// so every such character is rejected too.
		if r < 0x20 || (r >= 0x7f && r <= 0x9f) ||
			(r >= 0xd800 && r <= 0xf8ff) || r >= 0xfff0 {
			return fmt.Errorf("%w: %q contains the character %U, which ZooKeeper does not allow in a path", ErrBadPath, p, r)
		}
	}
	return nil
}

// Join appends child names to an absolute path.
func Join(parent string, names ...string) string {
	p := parent
	for _, n := range names {
		if p == "/" {
			p = "/" + n
		} else {
			p = p + "/" + n
		}
	}
	return p
}
