package inspect

import (
	"strings"
	"testing"
	"time"

	"github.com/zklock/zklock/internal/recipe"
)

// TestFittedScreen: a live frame too small for its queue never claims the
// lock is free, keeps the holder before any waiter, and counts the rest;
// with no size known it shows everything.
func TestFittedScreen(t *testing.T) {
	es := []recipe.Entry{{Path: "/p", Position: 1, Holding: true}, {Path: "/p", Position: 2}, {Path: "/p", Position: 3}}
	for _, tc := range []struct {
		rows      int
		want, not []string
	}{
		{0, []string{"holding", "waiting"}, []string{"more"}},
		{1, []string{"… and 3 more: 1 holding, 2 waiting"}, []string{"no locks"}},
		{3, []string{"holding", "… and 2 more waiting"}, []string{"no locks"}},
		{4, []string{"holding", "waiting"}, []string{"more"}},
	} {
		var b strings.Builder
		o := InspectOptions{Path: "/p"}
		if err := o.fitted(&b, es, nil, tc.rows, time.Now()); err != nil {
			t.Fatal(err)
		}
		got := b.String()
		if tc.rows > 0 && strings.Count(got, "\n") > tc.rows {
			t.Errorf("%d rows: %d lines: %q", tc.rows, strings.Count(got, "\n"), got)
		}
		for _, w := range tc.want {
			if !strings.Contains(got, w) {
				t.Errorf("%d rows: %q does not say %q", tc.rows, got, w)
			}
		}
		for _, n := range tc.not {
			if strings.Contains(got, n) {
				t.Errorf("%d rows: %q says %q", tc.rows, got, n)
			}
		}
	}
}
