package cmd

import (
	"fmt"
	"math"
	"strconv"
	"time"
)

// limitValue is --limit: a semaphore's number of holders, at least 1. Its
// zero value means the flag was not given (a plain lock), so a 0 typed on
// the command line must fail here, at parse time, rather than quietly mean
// "no semaphore".
type limitValue int

func (l *limitValue) String() string { return strconv.Itoa(int(*l)) }
func (l *limitValue) Type() string   { return "N" }

func (l *limitValue) Set(s string) error {
	n, err := strconv.Atoi(s)
	if err != nil {
		return fmt.Errorf("%q is not a number", s)
	}
	if n < 1 {
		return fmt.Errorf("must be at least 1, not %d", n)
	}
	*l = limitValue(n)
	return nil
}

// maxSessionTimeout is the longest session timeout the protocol can carry:
// the connect request holds it as a 32-bit count of milliseconds.
const maxSessionTimeout = math.MaxInt32 * time.Millisecond

// checkSessionTimeout refuses a --session-timeout that the connect request
// cannot carry: less than a millisecond (it would be sent as 0) or more
// than 2^31−1 ms (it would overflow). Within that range the server clamps
// the value to its own bounds, which -v reports.
func checkSessionTimeout(d time.Duration) error {
	if d < time.Millisecond || d > maxSessionTimeout {
		return usageErrorf("--session-timeout must be between 1ms and %s (ZooKeeper carries it as 32-bit milliseconds), not %s",
			maxSessionTimeout, d)
	}
	return nil
}
