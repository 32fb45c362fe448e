package cmd

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestHelpHidesCredentials: help prints flag defaults, and a default taken
// from ZKLOCK_AUTH used to print the password with it.
func TestHelpHidesCredentials(t *testing.T) {
	const secret = "s3cr3t-in-env"
	for _, args := range [][]string{
		{"--help"}, {"run", "--help"}, {"tryrun", "--help"}, {"list", "--help"},
		{"holders", "--help"}, {"version", "--help"}, {"help", "run"}, {"run", "-h"},
		{"config", "--help"}, {"completion", "--help"}, {"forget", "--help"},
	} {
		t.Setenv(envAuth, "digest:alice:"+secret)
		t.Setenv(envAuthFile, "")
		var out, errb bytes.Buffer
		if code := run(context.Background(), args, &out, &errb); code != 0 {
			t.Errorf("%q: exit %d (%s)", args, code, errb.String())
		}
		if !strings.Contains(out.String(), "--auth-file") {
			t.Errorf("%q: help does not mention --auth-file:\n%s", args, out.String())
		}
		if strings.Contains(out.String()+errb.String(), secret) {
			t.Errorf("%q: help shows the password:\n%s", args, out.String())
		}
	}
}

// TestAuthSources: a flag beats the environment, the two flags (or the two
// variables) do not combine, ZKLOCK_AUTH does not reach the command, and no
// error names the password.
func TestAuthSources(t *testing.T) {
	file := writeAuthFile(t, "digest:bob:from-file\n", 0o600)
	for _, tc := range []struct {
		name           string
		env, envFile   string
		flag, flagFile string
		user           string // "" means a usage error
	}{
		{"env", "digest:alice:pw", "", "", "", "alice"},
		{"env file", "", file, "", "", "bob"},
		{"flag file beats env", "digest:alice:pw", "", "", file, "bob"},
		{"flag beats env file", "", file, "digest:carol:pw", "", "carol"},
		{"both flags", "", "", "digest:carol:pw", file, ""},
		{"both variables", "digest:alice:pw", file, "", "", ""},
		{"bad file mode", "", writeAuthFile(t, "digest:bob:pw", 0o644), "", "", ""},
		{"bad value", "digest:alice-without-password", "", "", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(envAuth, tc.env)
			t.Setenv(envAuthFile, tc.envFile)
			var args []string
			if tc.flag != "" {
				args = append(args, "--auth", tc.flag)
			}
			if tc.flagFile != "" {
				args = append(args, "--auth-file", tc.flagFile)
			}
			g, _, err := resolvedGlobal(t, args...)
			if err != nil {
				t.Fatal(err)
			}
			if v := os.Getenv(envAuth); v != "" {
				t.Errorf("%s is still %q: the command would inherit it", envAuth, v)
			}
			a, err := g.auth()
			switch {
			case tc.user == "" && exitCode(err) != ExitUsage:
				t.Errorf("auth() = %v, %v; want a usage error", a, err)
			case tc.user == "" && (strings.Contains(err.Error(), "pw") || strings.Contains(err.Error(), "without-password")):
				t.Errorf("error shows the credentials: %v", err)
			case tc.user != "" && (err != nil || a == nil || a.User() != tc.user):
				t.Errorf("auth() = %v, %v; want user %s", a, err, tc.user)
			}
		})
	}
}

func writeAuthFile(t *testing.T, content string, mode os.FileMode) string {
	t.Helper()
	name := filepath.Join(t.TempDir(), "auth")
	if err := os.WriteFile(name, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(name, mode); err != nil { // past the umask
		t.Fatal(err)
	}
	return name
}

// TestConfigHelpNamesEveryKey: zklock config --help lists the keys a file
// may set, all of them: a key missing from the list looks unsupported.
func TestConfigHelpNamesEveryKey(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"config", "--help"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d (%s)", code, errb.String())
	}
	help := strings.Join(strings.Fields(out.String()), " ")
	for _, s := range settings {
		listed := regexp.MustCompile(`[( ]` + s.key() + `[,)]`).MatchString(help)
		if configKey(s.key()) && !listed {
			t.Errorf("config --help does not list the key %s", s.key())
		}
	}
}
