package cmd

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// TestDoctorPathRefusals: a --path doctor cannot check is refused before it
// connects. An empty one above all: unset in a script (--path "$P"), it
// used to skip the path's checks and report success without them.
func TestDoctorPathRefusals(t *testing.T) {
	for _, tc := range []struct{ path, msg string }{
		{"", `invalid argument "" for "--path" flag: bad path: empty`},
		{"locks/a", `invalid argument "locks/a" for "--path" flag: bad path: "locks/a" is relative`},
	} {
		configEnv(t, "", "")
		var errb bytes.Buffer
		code := run(context.Background(), []string{"--servers", "127.0.0.1:1", "--connect-timeout", "1s", "doctor", "--path", tc.path}, &bytes.Buffer{}, &errb)
		if code != ExitUsage || !strings.Contains(errb.String(), tc.msg) || strings.Count(errb.String(), "\n") != 1 {
			t.Errorf("--path %q: exit %d, %q; want exit 64 and one line with %q", tc.path, code, errb.String(), tc.msg)
		}
	}
}
