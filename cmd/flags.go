package cmd

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/zklock/zklock/internal/recipe"
	"github.com/zklock/zklock/internal/waitlimit"
	"github.com/zklock/zklock/lockexec"
)

// limitValue is --limit: a semaphore's number of holders, at least 1. Its
// zero value means the flag was not given (a plain lock), so a 0 typed on
// the command line must fail here, at parse time, rather than quietly mean
// "no semaphore". At most maxLimit: Curator counts leases in a Java int,
// so a larger limit could not mean the same to its clients.
type limitValue int

const maxLimit = math.MaxInt32

func (l *limitValue) String() string { return strconv.Itoa(int(*l)) }
func (l *limitValue) Type() string   { return "N" }

func (l *limitValue) Set(s string) error {
	n, err := strconv.Atoi(s)
	if errors.Is(err, strconv.ErrRange) {
		if strings.HasPrefix(s, "-") {
			return fmt.Errorf("must be at least 1, not %s", s)
		}
		return fmt.Errorf("must be at most %d, not %s", maxLimit, s)
	}
	if err != nil {
		return fmt.Errorf("%q is not a number", s)
	}
	if n < 1 {
		return fmt.Errorf("must be at least 1, not %d", n)
	}
	if n > maxLimit {
		return fmt.Errorf("must be at most %d, not %d", maxLimit, n)
	}
	*l = limitValue(n)
	return nil
}

// exitCodeValue is --conflict-exit-code: an exit status, which the shell
// reports only as 0 to 255; anything else fails at parse time.
type exitCodeValue int

func (c *exitCodeValue) String() string { return strconv.Itoa(int(*c)) }
func (c *exitCodeValue) Type() string   { return "CODE" }

func (c *exitCodeValue) Set(s string) error {
	n, err := strconv.Atoi(s)
	if err != nil {
		return fmt.Errorf("%q is not a number", s)
	}
	if n < 0 || n > 255 {
		return fmt.Errorf("must be between 0 and 255, not %d", n)
	}
	*c = exitCodeValue(n)
	return nil
}

// flavorValue is --flavor: the node names, one of the flavors zklock
// creates.
type flavorValue recipe.Flavor

func (f *flavorValue) String() string { return string(*f) }
func (f *flavorValue) Type() string   { return "NAME" }

func (f *flavorValue) Choices() []string {
	return []string{string(recipe.FlavorCurator), string(recipe.FlavorCuratorRW), string(recipe.FlavorKazoo)}
}

func (f *flavorValue) Set(s string) error {
	switch fl := recipe.Flavor(s); fl {
	case recipe.FlavorCurator, recipe.FlavorCuratorRW, recipe.FlavorKazoo:
		*f = flavorValue(fl)
		return nil
	}
	return fmt.Errorf("must be curator, curator-rw or kazoo, not %q", s)
}

// onLostValue is --on-lost: what to do when the lock is lost.
type onLostValue lockexec.Policy

func (p *onLostValue) String() string { return lockexec.Policy(*p).String() }
func (p *onLostValue) Type() string   { return "POLICY" }

func (p *onLostValue) Choices() []string { return []string{"terminate", "ignore"} }

func (p *onLostValue) Set(s string) error {
	switch s {
	case "terminate":
		*p = onLostValue(lockexec.Terminate)
	case "ignore":
		*p = onLostValue(lockexec.Ignore)
	default:
		return fmt.Errorf("must be terminate or ignore, not %q", s)
	}
	return nil
}

// nodeValue is revoke --node: one contender. Not given, revoke asks every
// holder; an empty value (--node "$NODE" with the variable unset) must not
// quietly mean the same, so it fails at parse time.
type nodeValue string

func (n *nodeValue) String() string { return string(*n) }
func (n *nodeValue) Type() string   { return "NAME" }

func (n *nodeValue) Set(s string) error {
	if s == "" {
		return errors.New("empty: name a contender as list shows it")
	}
	*n = nodeValue(s)
	return nil
}

// lockPathValue is doctor's --path: one lock path, checked as it is parsed.
// Not given, doctor checks no path; an empty value (--path "$P" with the
// variable unset) must not quietly mean the same.
type lockPathValue string

func (p *lockPathValue) String() string { return string(*p) }
func (p *lockPathValue) Type() string   { return "string" }

func (p *lockPathValue) Set(s string) error {
	if err := validateLockPath(s); err != nil {
		return errors.Unwrap(err) // the flag error becomes a usage error
	}
	*p = lockPathValue(s)
	return nil
}

// timeoutValue is --timeout: how long run waits. Not given, run waits
// forever; 0 means not at all; a negative timeout fails at parse time.
type timeoutValue waitlimit.Limit

func (w *timeoutValue) String() string {
	if d, ok := waitlimit.Limit(*w).Timeout(); ok {
		return d.String()
	}
	return ""
}

func (w *timeoutValue) Type() string { return "duration" }

func (w *timeoutValue) Set(s string) error {
	d, err := parseNonNegative(s)
	if err != nil {
		return err
	}
	*w = timeoutValue(waitlimit.AtMost(d))
	return nil
}

// durationValue is a duration of zero or more (--kill-grace,
// --max-runtime), refused at parse time when negative so that the error
// names the flag that was wrong.
type durationValue time.Duration

func (d *durationValue) String() string { return time.Duration(*d).String() }
func (d *durationValue) Type() string   { return "duration" }

func (d *durationValue) Set(s string) error {
	v, err := parseNonNegative(s)
	if err != nil {
		return err
	}
	*d = durationValue(v)
	return nil
}

// parseNonNegative is parseDuration for a duration that cannot be less
// than zero.
func parseNonNegative(s string) (time.Duration, error) {
	d, err := parseDuration(s)
	if err == nil && d < 0 {
		err = fmt.Errorf("must not be negative, not %s", d)
	}
	return d, err
}

// wellFormedDuration matches what time.ParseDuration reads, whatever the
// size: a failure to parse such a string is an overflow.
var wellFormedDuration = regexp.MustCompile(`^[-+]?([0-9]*\.?[0-9]+(ns|us|µs|μs|ms|s|m|h))+$`)

// parseDuration is time.ParseDuration with errors that show the way.
func parseDuration(s string) (time.Duration, error) {
	d, err := time.ParseDuration(s)
	if err == nil {
		return d, nil
	}
	if _, nerr := strconv.ParseFloat(s, 64); nerr == nil {
		return 0, fmt.Errorf("%q has no unit: write %ss for seconds (units: ms, s, m, h; e.g. 500ms, 30s, 5m, 1h30m)", s, s)
	}
	if wellFormedDuration.MatchString(s) {
		// Written as a duration, but beyond what one can hold.
		return 0, fmt.Errorf("%q is too long: at most %s", s, time.Duration(math.MaxInt64))
	}
	return 0, fmt.Errorf("%q is not a duration (e.g. 500ms, 30s, 5m, 1h30m)", s)
}

// oncePerValue is --once-per: the window within which one success is
// enough. Its zero value means the flag was not given; a window of zero or
// less would mean nothing, so it fails at parse time.
type oncePerValue time.Duration

func (w *oncePerValue) String() string {
	if *w == 0 {
		return ""
	}
	return time.Duration(*w).String()
}

func (w *oncePerValue) Type() string { return "duration" }

func (w *oncePerValue) Set(s string) error {
	d, err := parseDuration(s)
	if err != nil {
		return err
	}
	if d <= 0 {
		return fmt.Errorf("must be positive, not %s", d)
	}
	*w = oncePerValue(d)
	return nil
}

// maxSessionTimeout is the longest session timeout the protocol can carry:
// the connect request holds it as a 32-bit count of milliseconds.
const maxSessionTimeout = math.MaxInt32 * time.Millisecond

// sessionTimeoutValue is --session-timeout: one that the connect request
// can carry, checked as it is parsed so that a configuration file's bad
// value names its file and line. Less than a millisecond would be sent as
// 0, more than 2^31−1 ms would overflow. Within that range the server
// clamps the value to its own bounds, which -v reports.
type sessionTimeoutValue time.Duration

func (d *sessionTimeoutValue) String() string { return time.Duration(*d).String() }
func (d *sessionTimeoutValue) Type() string   { return "duration" }

func (d *sessionTimeoutValue) Set(s string) error {
	v, err := parseDuration(s)
	if err != nil {
		return err
	}
	if v < time.Millisecond || v > maxSessionTimeout {
		return fmt.Errorf("must be between 1ms and %s (ZooKeeper carries it as 32-bit milliseconds), not %s", maxSessionTimeout, v)
	}
	*d = sessionTimeoutValue(v)
	return nil
}

// positiveDurationValue is a duration that must be more than zero
// (--connect-timeout: no time at all could never connect).
type positiveDurationValue time.Duration

func (d *positiveDurationValue) String() string { return time.Duration(*d).String() }
func (d *positiveDurationValue) Type() string   { return "duration" }

func (d *positiveDurationValue) Set(s string) error {
	v, err := parseDuration(s)
	if err != nil {
		return err
	}
	if v <= 0 {
		return fmt.Errorf("must be positive, not %s", v)
	}
	*d = positiveDurationValue(v)
	return nil
}
