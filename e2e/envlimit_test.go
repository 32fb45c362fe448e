package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestEnvironmentTooLarge: a run whose command the kernel could not start,
// because ZKLOCK_HELD and its siblings would pass the 128 KiB limit on one
// variable (1,400 paths, one path of 131,000 bytes, or 1,200 members of a
// pool taken at once), exits 64 before it takes any lock: nothing is
// created, and no other job waits for it.
func TestEnvironmentTooLarge(t *testing.T) {
	base := lockPath(t)
	many := []string{"run"}
	for i := range 1400 {
		many = append(many, "--path", base+"/a-rather-long-name-for-one-part-of-the-job-"+strings.Repeat("x", 20)+"-"+fmt.Sprintf("%04d", i))
	}
	long := base + "/" + strings.Repeat("y", 131000)
	// A pool's command holds each member it took as a path of its own
	// (PATH/MEMBER): 1,200 members of 100 bytes fit in one argument,
	// but not, with their nodes, in one variable.
	var members []string
	for i := range 1200 {
		members = append(members, fmt.Sprintf("env-%04d-%s", i, strings.Repeat("z", 90)))
	}
	pool := []string{"run", "--path", base, "--resources", strings.Join(members, ","), "--take", "1200"}
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"1,400 paths", many},
		{"a path of 131,000 bytes", []string{"run", "--path", long}},
		{"a pool's 1,200 members", pool},
	} {
		r := runWithin(t, 60*time.Second, zklock(t, append(tc.args, "--", "true")...))
		if r.code != 64 || strings.Count(r.stderr, "\n") != 1 || !strings.Contains(r.stderr, "MAX_ARG_STRLEN") || !strings.Contains(r.stderr, "nothing was locked") {
			t.Errorf("%s: exit %d, stderr %.300q; want 64 and one line naming the limit", tc.name, r.code, r.stderr)
		}
		if ok, _, err := rawZK(t).Exists(base); err != nil || ok {
			t.Errorf("%s: %s exists (%v): something was created", tc.name, base, err)
		}
	}
}
