package zktest

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
)

// Server ports are chosen below the kernel's ephemeral range rather than
// with a plain Listen on port 0. Ports from Listen(":0") come from the
// ephemeral range, where two things go wrong for a server that is killed
// and restarted on the same port:
//
//   - while it is down, an outgoing connection (a ZooKeeper client, another
//     JVM's election traffic) may be given that port as its local port, and
//     the restart then fails to bind;
//   - a client reconnecting to 127.0.0.1:p can be given local port p and
//     connect to itself (TCP simultaneous open), so it "talks" to a server
//     that is not there.
//
// Below the ephemeral range neither can happen. Each candidate is still
// checked with a real Listen, and start-up retries with fresh ports if a
// bind clashes anyway (another test binary may pick the same port).
const (
	portRangeLow  = 10000
	portRangeHigh = 32000 // exclusive; below Linux's default ephemeral start
)

var (
	portsMu sync.Mutex
	// portsUsed remembers every port handed out by this process, so two
	// clusters in one test binary never get the same port even after the
	// first one stops listening.
	portsUsed = map[int]bool{}
)

// freePorts returns n distinct loopback TCP ports that were free a moment
// ago. All candidates are held open until all n are found, so the n ports
// are distinct.
func freePorts(n int) ([]int, error) {
	portsMu.Lock()
	defer portsMu.Unlock()
	low, high := portRangeLow, portRangeHigh
	if eLow, ok := ephemeralLow(); ok && eLow-1 < high {
		high = eLow - 1
	}
	var held []net.Listener
	defer func() {
		for _, l := range held {
			l.Close()
		}
	}()
	ports := make([]int, 0, n)
	for attempts := 0; len(ports) < n && attempts < 200*n; attempts++ {
		var p int
		if high-low > 1000 {
			p = low + rand.IntN(high-low)
		} else if l, err := net.Listen("tcp", "127.0.0.1:0"); err == nil {
			// No usable range below the ephemeral ports: fall back.
			held = append(held, l)
			p = l.Addr().(*net.TCPAddr).Port
			if !portsUsed[p] {
				ports = append(ports, p)
				portsUsed[p] = true
			}
			continue
		}
		if portsUsed[p] {
			continue
		}
		l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p))
		if err != nil {
			continue
		}
		held = append(held, l)
		ports = append(ports, p)
		portsUsed[p] = true
	}
	if len(ports) < n {
		return nil, fmt.Errorf("zktest: could not find %d free loopback ports", n)
	}
	return ports, nil
}

// ephemeralLow reads the start of the kernel's ephemeral port range.
func ephemeralLow() (int, bool) {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 0, false
	}
	f := strings.Fields(string(b))
	if len(f) < 1 {
		return 0, false
	}
	v, err := strconv.Atoi(f[0])
	return v, err == nil
}
