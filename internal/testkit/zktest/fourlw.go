package zktest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// defaultFourLetterTimeout bounds a four-letter command whose context has
// no deadline. A deadline is essential, not a nicety: ZooKeeper 3.8 accepts
// connections on the client port slightly before its database is set up,
// and a command that arrives in that window hits a NullPointerException
// while closing the socket, so the reply never ends and a read without a
// deadline hangs forever.
const defaultFourLetterTimeout = 5 * time.Second

// errNotServing is returned by the parsing helpers when the server answers
// "This ZooKeeper instance is not currently serving requests", which it
// does while starting, while an ensemble member has no quorum, and during
// leader election.
var errNotServing = errors.New("zktest: server is not currently serving requests")

const notServingReply = "This ZooKeeper instance is not currently serving requests"

// fourLetter sends a four-letter admin command (ruok, srvr, mntr, wchp, ...)
// to addr and returns the raw reply, read until the server closes the
// connection.
func fourLetter(ctx context.Context, addr, cmd string) (string, error) {
	if len(cmd) != 4 {
		return "", fmt.Errorf("zktest: four-letter command %q is not four letters", cmd)
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, defaultFourLetterTimeout)
		defer cancel()
	}
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return "", fmt.Errorf("zktest: %s %s: %w", cmd, addr, err)
	}
	defer conn.Close()
	dl, _ := ctx.Deadline()
	conn.SetDeadline(dl)
	// Cancellation (not just the deadline) must also unblock the read.
	stop := context.AfterFunc(ctx, func() { conn.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	if _, err := conn.Write([]byte(cmd)); err != nil {
		return "", fmt.Errorf("zktest: %s %s: %w", cmd, addr, err)
	}
	b, err := io.ReadAll(conn)
	if err != nil {
		if cerr := ctx.Err(); cerr != nil {
			err = cerr
		} else if ne, ok := err.(net.Error); ok && ne.Timeout() {
			// The socket deadline is the context's; the timer that marks
			// the context done may not have fired yet.
			err = fmt.Errorf("%w (%v)", context.DeadlineExceeded, err)
		}
		return string(b), fmt.Errorf("zktest: %s %s: reading reply: %w", cmd, addr, err)
	}
	return string(b), nil
}

// fourLetterChecked runs cmd and turns the server's refusals into errors.
func fourLetterChecked(ctx context.Context, addr, cmd string) (string, error) {
	out, err := fourLetter(ctx, addr, cmd)
	if err != nil {
		return "", err
	}
	if err := checkReply(cmd, out); err != nil {
		return "", fmt.Errorf("%w (%s %s)", err, cmd, addr)
	}
	return out, nil
}

func checkReply(cmd, out string) error {
	switch {
	case strings.HasPrefix(out, notServingReply):
		return errNotServing
	case strings.Contains(out, "is not executed because it is not in the whitelist"):
		return fmt.Errorf("zktest: %s is not in 4lw.commands.whitelist", cmd)
	}
	return nil
}

// srvr runs "srvr" and returns its "Key: value" lines, e.g. "Mode"
// (standalone, leader or follower), "Zxid", "Node count", "Connections".
func srvr(ctx context.Context, addr string) (map[string]string, error) {
	out, err := fourLetterChecked(ctx, addr, "srvr")
	if err != nil {
		return nil, err
	}
	return parseSrvr(out)
}

// Mntr runs "mntr" and returns its key/value pairs, e.g. zk_watch_count,
// zk_znode_count, zk_ephemerals_count, zk_num_alive_connections,
// zk_server_state. zk_watch_count counts data and child watches.
func Mntr(ctx context.Context, addr string) (map[string]string, error) {
	out, err := fourLetterChecked(ctx, addr, "mntr")
	if err != nil {
		return nil, err
	}
	return parseMntr(out)
}

// Wchp runs "wchp" and returns, per path, the ids of the sessions watching
// it (sorted). Beware: ZooKeeper 3.8 lists only data watches here (set by
// exists and getData); watches set by getChildren do not appear in wchp or
// wchc, although they are counted in Mntr's zk_watch_count.
func Wchp(ctx context.Context, addr string) (map[string][]int64, error) {
	out, err := fourLetterChecked(ctx, addr, "wchp")
	if err != nil {
		return nil, err
	}
	return parseWchp(out)
}

// Cons returns the raw "cons" reply: one line per client connection with its
// session id, timeout and counters.
func Cons(ctx context.Context, addr string) (string, error) {
	return fourLetterChecked(ctx, addr, "cons")
}

// SessionConn is what `cons` says of one session's connection.
type SessionConn struct {
	// Received counts the packets the server read on the connection,
	// pings included.
	Received int64
	// LastXid is the xid of the last request answered other than a ping,
	// an auth or a set-watches packet (whose xids are negative): it moves
	// with every request the client sends of its own, and only then.
	LastXid int64
	// LastOp is the last operation answered ("PING", "SYNC", …).
	LastOp string
	// Timeout is the session timeout negotiated on this connection.
	Timeout time.Duration
}

// ConsSession reads the connection that carries session id on the server
// at addr, from its `cons` reply; ok is false when that server carries
// no such session.
func ConsSession(ctx context.Context, addr string, id int64) (c SessionConn, ok bool, err error) {
	out, err := Cons(ctx, addr)
	if err != nil {
		return SessionConn{}, false, err
	}
	return parseConsSession(out, id)
}

// parseConsSession finds session id's line in a `cons` reply:
// " /127.0.0.1:5[1](queued=0,recved=7,sent=7,sid=0x1…,lop=PING,…,lcxid=0x3,…)".
func parseConsSession(out string, id int64) (SessionConn, bool, error) {
	want := "sid=" + formatSessionID(id)
	for _, line := range strings.Split(out, "\n") {
		open, end := strings.IndexByte(line, '('), strings.LastIndexByte(line, ')')
		if open < 0 || end < open {
			continue
		}
		fields := strings.Split(line[open+1:end], ",")
		if !slices.Contains(fields, want) {
			continue
		}
		var c SessionConn
		for _, f := range fields {
			k, v, _ := strings.Cut(f, "=")
			var err error
			switch k {
			case "recved":
				c.Received, err = strconv.ParseInt(v, 10, 64)
			case "lcxid":
				c.LastXid, err = strconv.ParseInt(strings.TrimPrefix(v, "0x"), 16, 64)
			case "lop":
				c.LastOp = v
			case "to":
				var ms int64
				ms, err = strconv.ParseInt(v, 10, 64)
				c.Timeout = time.Duration(ms) * time.Millisecond
			}
			if err != nil {
				return SessionConn{}, false, fmt.Errorf("cons: %s: %w", f, err)
			}
		}
		return c, true, nil
	}
	return SessionConn{}, false, nil
}

// Stat returns the raw "stat" reply.
func Stat(ctx context.Context, addr string) (string, error) {
	return fourLetterChecked(ctx, addr, "stat")
}

// parseSrvr parses "Key: value" lines as printed by srvr and stat.
func parseSrvr(out string) (map[string]string, error) {
	if err := checkReply("srvr", out); err != nil {
		return nil, err
	}
	m := map[string]string{}
	for _, line := range strings.Split(out, "\n") {
		k, v, ok := strings.Cut(line, ": ")
		if !ok {
			continue // e.g. stat's "Clients:" header and its client lines
		}
		m[k] = v
	}
	if _, ok := m["Mode"]; !ok {
		return nil, fmt.Errorf("zktest: unexpected srvr reply %q", out)
	}
	return m, nil
}

// parseMntr parses mntr's "key<TAB>value" lines.
func parseMntr(out string) (map[string]string, error) {
	if err := checkReply("mntr", out); err != nil {
		return nil, err
	}
	m := map[string]string{}
	for _, line := range strings.Split(out, "\n") {
		if line == "" {
			continue
		}
		k, v, ok := strings.Cut(line, "\t")
		if !ok {
			return nil, fmt.Errorf("zktest: unexpected mntr line %q", line)
		}
		m[k] = v
	}
	if len(m) == 0 {
		return nil, fmt.Errorf("zktest: empty mntr reply")
	}
	return m, nil
}

// parseWchp parses wchp's reply: each watched path on a line of its own,
// followed by one "\t0x<session id in hex>" line per watching session, and
// a blank line at the end ("\n" alone when nothing is watched).
func parseWchp(out string) (map[string][]int64, error) {
	if err := checkReply("wchp", out); err != nil {
		return nil, err
	}
	m := map[string][]int64{}
	cur, have := "", false
	for _, line := range strings.Split(out, "\n") {
		switch {
		case line == "":
		case strings.HasPrefix(line, "\t"):
			if !have {
				return nil, fmt.Errorf("zktest: wchp: session line %q before any path", line)
			}
			id, err := parseSessionID(strings.TrimSpace(line))
			if err != nil {
				return nil, fmt.Errorf("zktest: wchp: %w", err)
			}
			m[cur] = append(m[cur], id)
		default:
			if !strings.HasPrefix(line, "/") {
				return nil, fmt.Errorf("zktest: wchp: unexpected line %q", line)
			}
			cur, have = line, true
			if _, ok := m[cur]; !ok {
				m[cur] = nil
			}
		}
	}
	for _, ids := range m {
		sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	}
	return m, nil
}

// parseSessionID parses a session id as ZooKeeper prints it ("0x" and
// lower-case hex) into the int64 that clients report (e.g. go-zookeeper's
// Conn.SessionID). Ids are parsed as unsigned 64-bit values because the
// server id occupies the top byte.
func parseSessionID(s string) (int64, error) {
	h, ok := strings.CutPrefix(s, "0x")
	if !ok {
		return 0, fmt.Errorf("session id %q lacks 0x prefix", s)
	}
	u, err := strconv.ParseUint(h, 16, 64)
	if err != nil {
		return 0, fmt.Errorf("session id %q: %w", s, err)
	}
	return int64(u), nil
}

// formatSessionID formats a session id the way ZooKeeper prints it.
func formatSessionID(id int64) string {
	return "0x" + strconv.FormatUint(uint64(id), 16)
}

// ParseSessionID reads a session id in hex, as ZKLOCK_SESSION_ID and
// `cons` write it ("0x10000a1b2c30001"; the 0x and surrounding space are
// optional), the inverse of formatSessionID.
func ParseSessionID(s string) (int64, error) {
	u, err := strconv.ParseUint(strings.TrimPrefix(strings.TrimSpace(s), "0x"), 16, 64)
	if err != nil {
		return 0, fmt.Errorf("session id %q: %w", s, err)
	}
	return int64(u), nil
}

// WatchSummary is wchs's reply.
type WatchSummary struct {
	Connections, Paths, Watches int
}

// Wchs runs "wchs": how many connections watch how many paths, and the
// watches in all. Beware: like Wchp, it counts the data watches only (set
// by exists and getData); Mntr's zk_watch_count counts child watches too.
func Wchs(ctx context.Context, addr string) (WatchSummary, error) {
	out, err := fourLetterChecked(ctx, addr, "wchs")
	if err != nil {
		return WatchSummary{}, err
	}
	return parseWchs(out)
}

// parseWchs parses wchs's reply, e.g. "2 connections watching 3 paths\n
// Total watches:4\n".
func parseWchs(out string) (WatchSummary, error) {
	var s WatchSummary
	if _, err := fmt.Sscanf(out, "%d connections watching %d paths\nTotal watches:%d", &s.Connections, &s.Paths, &s.Watches); err != nil {
		return WatchSummary{}, fmt.Errorf("zktest: unexpected wchs reply %q: %v", out, err)
	}
	return s, nil
}
