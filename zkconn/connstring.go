package zkconn

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"unicode"
)

// DefaultPort is ZooKeeper's client port, used when a host has none.
const DefaultPort = 2181

// ErrBadConnString marks a --servers value that cannot be parsed.
var ErrBadConnString = errors.New("bad connect string")

// ConnString is a parsed ZooKeeper connect string:
// "host:port,host:port[/chroot]", the form every ZooKeeper client accepts.
type ConnString struct {
	// Servers are host:port pairs, in the order given.
	Servers []string
	// Chroot is prefixed to every path zklock uses; "" means none. The Java
	// client and Kazoo apply it transparently; go-zookeeper does not parse it
	// at all, so zklock applies and strips it itself.
	Chroot string
}

// String renders the connect string back in its canonical form.
func (c ConnString) String() string {
	return strings.Join(c.Servers, ",") + c.Chroot
}

// ParseConnString parses "host[:port][,host[:port]…][/chroot]". IPv6 hosts are
// written in brackets: "[::1]:2181".
func ParseConnString(s string) (ConnString, error) {
	var cs ConnString
	s = strings.TrimSpace(s)
	if s == "" {
		return cs, fmt.Errorf("%w: empty", ErrBadConnString)
	}
	hosts := s
	if i := strings.IndexByte(s, '/'); i >= 0 {
		hosts, cs.Chroot = s[:i], s[i:]
		if cs.Chroot == "/" {
			cs.Chroot = ""
		} else if err := ValidatePath(cs.Chroot); err != nil {
			return cs, fmt.Errorf("%w: chroot %v", ErrBadConnString, err)
		}
	}
	for _, h := range strings.Split(hosts, ",") {
		h = strings.TrimSpace(h)
		if h == "" {
			return cs, fmt.Errorf("%w: empty host in %q", ErrBadConnString, s)
		}
		host, port, err := net.SplitHostPort(h)
		if err != nil {
			// No port: accept a bare host (or bracketed IPv6 literal).
			if strings.Contains(strings.Trim(h, "[]"), ":") && !strings.HasPrefix(h, "[") {
				return cs, fmt.Errorf("%w: %q: write IPv6 addresses as [addr]:port", ErrBadConnString, h)
			}
			host, port = strings.Trim(h, "[]"), strconv.Itoa(DefaultPort)
		}
		if host == "" {
			return cs, fmt.Errorf("%w: empty host in %q", ErrBadConnString, h)
		}
		if strings.IndexFunc(host, badHostRune) >= 0 {
			return cs, fmt.Errorf("%w: bad host in %q", ErrBadConnString, h)
		}
		n, err := strconv.Atoi(port)
		if err != nil || n < 1 || n > 65535 {
			return cs, fmt.Errorf("%w: bad port in %q", ErrBadConnString, h)
		}
		// The port as a number: "0002181" and "+2181" are 2181, to the
		// dialer and in messages alike.
		cs.Servers = append(cs.Servers, net.JoinHostPort(host, strconv.Itoa(n)))
	}
	return cs, nil
}

// badHostRune is a character no host name or address holds. Brackets only
// enclose a whole IPv6 address, and space within a host is a typo that no
// resolver would find.
func badHostRune(r rune) bool {
	return r == '[' || r == ']' || unicode.IsSpace(r) || unicode.IsControl(r)
}
