package zkconn

import (
	"fmt"
	"net"
	"strconv"
	"strings"
)

// # Reading the ensemble's membership
//
// Since 3.5 every server publishes the ensemble's configuration in
// /zookeeper/config, one member a line, and changes it with the reconfig
// operation (a dynamic reconfiguration):
//
//	server.1=10.0.0.1:2888:3888:participant;0.0.0.0:2181
//	server.4=zk4.example.com:2888:3888:observer;2181
//	server.5=[2001:db8::5]:2888:3888;[2001:db8::5]:2181
//	server.6=a.example:2888:3888|b.example:2888:3888;2181
//	version=100000004
//
// A member's line holds its quorum address (with the election port, the
// role, and since 3.6 more addresses after '|') and, after ';', the
// address clients connect to: host and port, or the port alone. The
// client host is often a wildcard (0.0.0.0, [::]), the address the server
// binds, where a client must dial the member's own host instead. A line
// with no client address belongs to a member that serves no clients.
// Observers serve clients like participants do, so they count.
//
// The node comes from the servers, yet zklock treats it as untrusted
// input, like any node a client can read: a line it cannot parse, a member
// with no usable client port, or a node too large to be a configuration
// is reported (for -v) and ignored, never obeyed.

// Member is one server of the ensemble, as /zookeeper/config lists it.
type Member struct {
	ID int64
	// Addr is where clients connect, "host:port", with the host as the
	// configuration writes it (or the quorum host, for a wildcard).
	Addr string
	// Observer: the member does not vote. It serves clients all the same.
	Observer bool
}

// Membership is the ensemble's configuration: its members in the order
// of the node, and the configuration's version (hex, as the node writes
// it).
type Membership struct {
	Members []Member
	Version string
}

// Limits on what a configuration may be. ZooKeeper's server ids fit a
// byte in practice (the election protocol sends them as longs, but an
// ensemble of more than a few dozen members cannot commit a write), and a
// member's line is well under 1 KiB. Anything beyond is not a
// configuration to follow.
const (
	maxConfigBytes = 64 << 10
	maxMembers     = 255
)

// ParseMembership reads the content of /zookeeper/config. It returns the
// members that clients can reach and a description of each line it
// ignored. A node larger than maxConfigBytes, or with more than maxMembers
// members, is ignored whole: the result then has no members.
func ParseMembership(data []byte) (Membership, []string) {
	var m Membership
	if len(data) > maxConfigBytes {
		return m, []string{fmt.Sprintf("configuration of %d bytes ignored: more than %d", len(data), maxConfigBytes)}
	}
	var problems []string
	seen := map[int64]bool{}
	for n, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(strings.TrimSuffix(line, "\r"))
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		key, value, ok := strings.Cut(line, "=")
		if !ok {
			problems = append(problems, fmt.Sprintf("line %d ignored: no '='", n+1))
			continue
		}
		if key == "version" {
			if _, err := strconv.ParseUint(value, 16, 64); err != nil {
				problems = append(problems, fmt.Sprintf("line %d ignored: version %s is not hexadecimal", n+1, quoteShort(value)))
				continue
			}
			m.Version = value
			continue
		}
		idText, isServer := strings.CutPrefix(key, "server.")
		if !isServer {
			// Other keys (group.N, weight.N) say nothing about addresses.
			continue
		}
		id, err := strconv.ParseInt(idText, 10, 64)
		if err != nil || id < 0 {
			problems = append(problems, fmt.Sprintf("line %d ignored: server id %s is not a number", n+1, quoteShort(idText)))
			continue
		}
		if seen[id] {
			problems = append(problems, fmt.Sprintf("line %d ignored: server.%d listed twice", n+1, id))
			continue
		}
		mem, err := parseMember(id, value)
		if err != nil {
			problems = append(problems, fmt.Sprintf("line %d ignored: server.%d: %v", n+1, id, err))
			continue
		}
		seen[id] = true
		if len(m.Members) == maxMembers {
			return Membership{}, []string{fmt.Sprintf("configuration ignored: more than %d members", maxMembers)}
		}
		m.Members = append(m.Members, mem)
	}
	return m, problems
}

// parseMember reads the value of a server.N line.
func parseMember(id int64, value string) (Member, error) {
	quorum, client, hasClient := strings.Cut(value, ";")
	if !hasClient || strings.TrimSpace(client) == "" {
		return Member{}, fmt.Errorf("no client address")
	}
	// The first of the quorum addresses (3.6 allows several, after '|').
	first, _, _ := strings.Cut(quorum, "|")
	qhost, rest, err := splitHost(strings.TrimSpace(first))
	if err != nil {
		return Member{}, fmt.Errorf("quorum address: %v", err)
	}
	fields := strings.Split(rest, ":")
	// quorum port, election port, and the role if given.
	if len(fields) < 2 || len(fields) > 3 {
		return Member{}, fmt.Errorf("quorum address %s: want host:port:port[:role]", quoteShort(first))
	}
	for _, p := range fields[:2] {
		if _, err := parsePort(p); err != nil {
			return Member{}, fmt.Errorf("quorum address: %v", err)
		}
	}
	observer := false
	if len(fields) == 3 {
		switch strings.ToLower(fields[2]) {
		case "participant":
		case "observer":
			observer = true
		default:
			return Member{}, fmt.Errorf("role %s: want participant or observer", quoteShort(fields[2]))
		}
	}
	client = strings.TrimSpace(client)
	chost, cport := "", client
	if strings.Contains(client, ":") {
		h, p, err := net.SplitHostPort(client)
		if err != nil {
			return Member{}, fmt.Errorf("client address %s: %v", quoteShort(client), err)
		}
		chost, cport = h, p
	}
	port, err := parsePort(cport)
	if err != nil {
		return Member{}, fmt.Errorf("client address: %v", err)
	}
	if chost == "" || isWildcard(chost) {
		chost = qhost
	}
	if err := checkHost(chost); err != nil {
		return Member{}, err
	}
	return Member{ID: id, Addr: net.JoinHostPort(chost, strconv.Itoa(port)), Observer: observer}, nil
}

// splitHost splits "host:rest" or "[v6]:rest".
func splitHost(s string) (host, rest string, err error) {
	if strings.HasPrefix(s, "[") {
		end := strings.Index(s, "]")
		if end < 0 || end+1 >= len(s) || s[end+1] != ':' {
			return "", "", fmt.Errorf("%s: unclosed '[' or no port", quoteShort(s))
		}
		return s[1:end], s[end+2:], nil
	}
	host, rest, ok := strings.Cut(s, ":")
	if !ok {
		return "", "", fmt.Errorf("%s: no port", quoteShort(s))
	}
	return host, rest, checkHost(host)
}

// checkHost refuses a host no client could dial: empty, or with bytes
// that no name or address holds (a control character, a space, a '/').
func checkHost(h string) error {
	if h == "" {
		return fmt.Errorf("empty host")
	}
	if len(h) > 253 {
		return fmt.Errorf("host of %d bytes: longer than any name", len(h))
	}
	for _, r := range h {
		ok := r == '.' || r == '-' || r == '_' || r == ':' || r == '%' ||
			('0' <= r && r <= '9') || ('a' <= r && r <= 'z') || ('A' <= r && r <= 'Z')
		if !ok {
			return fmt.Errorf("host %s: not a name or address", quoteShort(h))
		}
	}
	return nil
}

// parsePort reads a port a client can connect to: 1 to 65535. Port 0 is
// a server's "any port", no address to dial.
func parsePort(s string) (int, error) {
	p, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil || p < 1 || p > 65535 {
		return 0, fmt.Errorf("port %s: want 1 to 65535", quoteShort(s))
	}
	return p, nil
}

// isWildcard reports whether host is an address a server binds to listen
// on every interface.
func isWildcard(host string) bool {
	ip := net.ParseIP(host)
	return ip != nil && ip.IsUnspecified()
}

// quoteShort quotes what a configuration wrote, cut to a readable length,
// with any control character escaped: it comes from the servers, not the
// user, and goes to a terminal.
func quoteShort(s string) string {
	const max = 40
	if len(s) > max {
		return strconv.Quote(s[:max]) + "…"
	}
	return strconv.Quote(s)
}
