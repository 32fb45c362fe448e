package cmd

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
)

// resolvedGlobal parses the connection flags and fills in the rest from the
// environment and the configuration files, as every command does.
func resolvedGlobal(t *testing.T, args ...string) (*globalOptions, *resolved, error) {
	t.Helper()
	g := &globalOptions{}
	fs := pflag.NewFlagSet("zklock", pflag.ContinueOnError)
	g.addFlags(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	r, err := resolve(fs.Lookup, os.Getenv)
	hideAuthEnv()
	g.SASL.passwordFromEnv()
	return g, r, err
}

// configEnv gives a test its own user and system files, and an environment
// with none of zklock's variables.
func configEnv(t *testing.T, user, system string) (userPath, systemPath string) {
	t.Helper()
	dir := t.TempDir()
	home := filepath.Join(dir, "home")
	userPath = filepath.Join(home, ".config", "zklock", "config.toml")
	systemPath = filepath.Join(dir, "etc", "config.toml")
	for p, doc := range map[string]string{userPath: user, systemPath: system} {
		if doc == "" {
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	old := systemConfig
	systemConfig = systemPath
	t.Cleanup(func() { systemConfig = old })
	t.Setenv("HOME", home)
	for _, v := range []string{"XDG_CONFIG_HOME", envConfig, envServers, envAuth, envAuthFile, envTLSCA, envTLSCert, envTLSKey, envJAAS, envSASLPassword} {
		t.Setenv(v, "")
	}
	return userPath, systemPath
}

// TestSettingsPrecedence: flag, then environment, then the user's file,
// then the system's, then the default; key by key, so a file's other keys
// still apply under a higher source's.
func TestSettingsPrecedence(t *testing.T) {
	for _, tc := range []struct {
		name             string
		flag, env        bool
		user, system     bool
		servers, connect string
		source           string // of servers
	}{
		{"default", false, false, false, false, defaultServers, "5s", "default"},
		{"system", false, false, false, true, "sys:2181", "7s", "etc/config.toml:1"},
		{"user over system", false, false, true, true, "user:2181", "7s", "home/.config/zklock/config.toml:1"},
		{"user alone", false, false, true, false, "user:2181", "5s", "home/.config/zklock/config.toml:1"},
		{"env over files", false, true, true, true, "env:2181", "7s", "env ZKLOCK_SERVERS"},
		{"flag over all", true, true, true, true, "flag:2181", "7s", "flag --servers"},
		{"flag alone", true, false, false, false, "flag:2181", "5s", "flag --servers"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			user, system := "", ""
			if tc.user {
				user = "servers = \"user:2181\"\n"
			}
			if tc.system {
				// connect_timeout only in the system file: it applies under a user file.
				system = "servers = \"sys:2181\"\nconnect_timeout = \"7s\"\n"
			}
			configEnv(t, user, system)
			if tc.env {
				t.Setenv(envServers, "env:2181")
			}
			var args []string
			if tc.flag {
				args = []string{"--servers", "flag:2181"}
			}
			g, r, err := resolvedGlobal(t, args...)
			if err != nil {
				t.Fatal(err)
			}
			if g.Servers != tc.servers || g.ConnectTimeout.String() != tc.connect {
				t.Errorf("servers %q, connect timeout %s; want %q, %s", g.Servers, g.ConnectTimeout, tc.servers, tc.connect)
			}
			if src := r.rows[0].origin.where; !strings.HasSuffix(src, tc.source) {
				t.Errorf("servers came from %q, want …%s", src, tc.source)
			}
		})
	}
}

// TestSettingsExplicitFile: $ZKLOCK_CONFIG is read instead of both files,
// and must exist.
func TestSettingsExplicitFile(t *testing.T) {
	configEnv(t, "servers = \"user:2181\"\n", "servers = \"sys:2181\"\nflavor = \"kazoo\"\n")
	explicit := filepath.Join(t.TempDir(), "ci.toml")
	if err := os.WriteFile(explicit, []byte("session_timeout = \"4s\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv(envConfig, explicit)
	g, _, err := resolvedGlobal(t)
	if err != nil {
		t.Fatal(err)
	}
	if g.Servers != defaultServers || g.SessionTimeout != 4*time.Second {
		t.Errorf("servers %q, session timeout %s; want the default and 4s", g.Servers, g.SessionTimeout)
	}
	t.Setenv(envConfig, explicit+".missing")
	if _, _, err := resolvedGlobal(t); exitCode(err) != ExitUsage || !strings.Contains(err.Error(), "ci.toml.missing: cannot read: no such file") {
		t.Errorf("a missing $ZKLOCK_CONFIG: %v", err)
	}
}

// TestSettingsRefusals: a malformed file, an unknown key and a bad value
// are each exit 64, one line naming the file and the line.
func TestSettingsRefusals(t *testing.T) {
	for _, tc := range []struct{ doc, want string }{
		{"servers = \"zk1:2181\"\nsesion_timeout = \"10s\"\n", `:2: unknown key "sesion_timeout"`},
		{"servers = \"zk1:2181\n", ":1: "},
		{"# timeouts\nsession_timeout = 10\n", `:2: session_timeout: "10" has no unit: write 10s for seconds`},
		{"\n\nflavor = \"etcd\"\n", `:3: flavor: must be curator, curator-rw or kazoo, not "etcd"`},
		{"auth = \"digest:a:b\"\n", `:1: unknown key "auth"`}, // a secret belongs in auth_file
		{"tls = \"yes\"\n", `:1: tls: "yes" is not a boolean: write true or false (or 1, 0)`},
		{"sasl = \"plain\"\n", `:1: sasl: want digest (DIGEST-MD5) or gssapi (Kerberos), not "plain"`},
		{"session_timeout = \"0s\"\n", `:1: session_timeout: must be between 1ms and 596h31m23.647s (ZooKeeper carries it as 32-bit milliseconds), not 0s`},
		{"\nconnect_timeout = \"-1s\"\n", `:2: connect_timeout: must be positive, not -1s`},
	} {
		_, system := configEnv(t, "", tc.doc)
		var out, errb bytes.Buffer
		code := run(context.Background(), []string{"config"}, &out, &errb)
		want := "zklock: " + system + tc.want
		if code != ExitUsage || !strings.HasPrefix(errb.String(), want) || strings.Count(errb.String(), "\n") != 1 {
			t.Errorf("%q: exit %d, %q; want exit 64 and one line %q…", tc.doc, code, errb.String(), want)
		}
	}
	// A command that never connects is not stopped by a broken file.
	configEnv(t, "", "servers = \n")
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"version"}, &out, &errb); code != 0 {
		t.Errorf("version with a broken file: exit %d, %s", code, errb.String())
	}
}

// TestSettingsEnvBoolean: a boolean from the environment that is not one
// names the variable and the words it takes, not the Go parser.
func TestSettingsEnvBoolean(t *testing.T) {
	configEnv(t, "", "")
	t.Setenv(envProgress, "yes")
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"config"}, &out, &errb)
	want := `zklock: ZKLOCK_PROGRESS: "yes" is not a boolean: write true or false (or 1, 0)`
	if code != ExitUsage || !strings.HasPrefix(errb.String(), want) {
		t.Errorf("exit %d, %q; want exit 64 and %q…", code, errb.String(), want)
	}
}

// TestSettingsWithoutHome: cron may run a job with no HOME and no
// XDG_CONFIG_HOME; the system's file still applies.
func TestSettingsWithoutHome(t *testing.T) {
	configEnv(t, "servers = \"user:2181\"\n", "servers = \"sys:2181/locks\"\n")
	os.Unsetenv("HOME")
	os.Unsetenv("XDG_CONFIG_HOME")
	g, r, err := resolvedGlobal(t)
	if err != nil {
		t.Fatal(err)
	}
	if g.Servers != "sys:2181/locks" || len(r.files) != 1 {
		t.Errorf("servers %q from %d files; want the system file's", g.Servers, len(r.files))
	}
}

// TestConfigCommandMasks: zklock config shows every setting with its
// source, and never a password: not ZKLOCK_AUTH's, not
// ZKLOCK_SASL_PASSWORD's, not the auth file's contents.
func TestConfigCommandMasks(t *testing.T) {
	_, system := configEnv(t, "", "servers = \"zk1:2181,zk2:2181/locks\"\nflavor = \"kazoo\"\n")
	authFile := writeAuthFile(t, "digest:bob:file-secret\n", 0o600)
	t.Setenv(envAuth, "digest:alice:env-secret")
	t.Setenv(envSASLPassword, "sasl-secret")
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"config", "--tls-ca", "/etc/ssl/zk-ca.pem"}, &out, &errb)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	got := out.String()
	for _, secret := range []string{"env-secret", "sasl-secret", "file-secret"} {
		if strings.Contains(got+errb.String(), secret) {
			t.Errorf("zklock config shows %s:\n%s", secret, got)
		}
	}
	for _, want := range []string{
		"# files: " + system,
		"servers ", "zk1:2181,zk2:2181/locks", system + ":1",
		"flavor ", "kazoo", system + ":2",
		"auth ", "digest:alice:********", "env ZKLOCK_AUTH",
		"tls_ca ", "/etc/ssl/zk-ca.pem", "flag --tls-ca",
		"implied by tls_ca", // --tls-ca turns TLS on
		"session_timeout ", "10s", "default",
		"sasl_password ", "env ZKLOCK_SASL_PASSWORD",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("zklock config lacks %q:\n%s", want, got)
		}
	}
	if !strings.Contains(got, "\ntls ") || !strings.HasPrefix(strings.Fields(got[strings.Index(got, "\ntls "):])[1], "true") {
		t.Errorf("zklock config with --tls-ca does not show tls true:\n%s", got)
	}
	// An auth file is shown by its path only.
	t.Setenv(envAuth, "")
	out.Reset()
	if code := run(context.Background(), []string{"config", "--auth-file", authFile}, &out, &errb); code != 0 || !strings.Contains(out.String(), authFile) {
		t.Errorf("exit %d:\n%s", code, out.String())
	}
}

// TestSettingsGroups: credentials given two ways are taken together from
// the highest source that gives either, so a file's auth_file does not
// clash with ZKLOCK_AUTH, nor its jaas with a --sasl flag.
func TestSettingsGroups(t *testing.T) {
	authFile := writeAuthFile(t, "digest:bob:pw\n", 0o600)
	configEnv(t, "", "auth_file = \""+authFile+"\"\njaas = \"/etc/zklock/client.jaas\"\n")
	t.Setenv(envAuth, "digest:alice:pw")
	g, _, err := resolvedGlobal(t, "--sasl", "gssapi")
	if err != nil {
		t.Fatal(err)
	}
	if g.AuthFile != "" || g.SASL.JAAS != "" {
		t.Errorf("auth file %q, jaas %q: the file's were added under higher sources", g.AuthFile, g.SASL.JAAS)
	}
	if a, err := g.auth(); err != nil || a.User() != "alice" {
		t.Errorf("auth() = %v, %v; want alice's, from the environment", a, err)
	}
	// With no higher source, the file's auth_file applies.
	configEnv(t, "", "auth_file = \""+authFile+"\"\n")
	g, _, err = resolvedGlobal(t)
	if err != nil {
		t.Fatal(err)
	}
	if a, err := g.auth(); err != nil || a.User() != "bob" {
		t.Errorf("auth() = %v, %v; want bob's, from the file's auth_file", a, err)
	}
}

// TestConfigCommandHostileValues: a value from the environment or a file
// (a shared /etc file is another's to write) with terminal escapes, or
// 100 KB long, is shown escaped and cut short, and does not pad every row
// of the table to its width.
func TestConfigCommandHostileValues(t *testing.T) {
	configEnv(t, "", "")
	t.Setenv(envTLSCA, "/tmp/\x1b]0;pwned\x07"+strings.Repeat("y", 100000))
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"config"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	got := out.String()
	if strings.ContainsAny(got, "\x1b\x07") || !strings.Contains(got, `\x1b]0;pwned\x07`) {
		t.Errorf("zklock config shows a value's escapes raw: %.300q", got)
	}
	if len(got) > 16000 {
		t.Errorf("zklock config with a 100 KB value prints %d bytes", len(got))
	}
}

// TestTLSContradicted: tls = false in a file, with a TLS file setting that
// turns TLS on, cannot tell which was meant: 64, naming both. Left at its
// default, tls is implied and nothing is refused.
func TestTLSContradicted(t *testing.T) {
	_, system := configEnv(t, "", "tls = false\n")
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"--tls-cert", "/c.pem", "--tls-key", "/k.pem", "list", "--path", "/a"}, &out, &errb)
	want := "zklock: tls is false (" + system + ":1), but tls_cert turns TLS on: drop one of them (see zklock list --help)\n"
	if code != 64 || errb.String() != want {
		t.Errorf("exit %d, %q; want 64, %q", code, errb.String(), want)
	}
}

// TestDocumentedConfigFile: the sample configuration file the guide shows
// (testdata/config/config.toml) is read whole, every key a setting.
func TestDocumentedConfigFile(t *testing.T) {
	configEnv(t, "", "")
	t.Setenv(envConfig, filepath.Join("..", "testdata", "config", "config.toml"))
	g, _, err := resolvedGlobal(t)
	if err != nil {
		t.Fatal(err)
	}
	if g.Servers != "zk1.example.com:2181,zk2.example.com:2181,zk3.example.com:2181/locks" ||
		g.SessionTimeout != 10*time.Second || g.AuthFile != "/etc/zklock/auth" || g.TLSFiles.Key != "/etc/zklock/host.key" {
		t.Errorf("the sample file gives %+v", g)
	}
}

// envOtherUser marks the child run of TestUnreadableDefaultConfig, as the
// other user; its value is the system file to use.
const envOtherUser = "ZKLOCK_TEST_OTHER_USER_SYSTEM"

// TestUnreadableDefaultConfig: run as one user with another's HOME (sudo
// or setpriv that keep root's), the user file's directory cannot be
// searched. That file is not this user's, so it counts as absent: the
// system file applies, and -v and zklock config say what was skipped. Named
// by ZKLOCK_CONFIG, the same file is an error. Root reads everything, so
// as root the test runs itself again as nobody.
func TestUnreadableDefaultConfig(t *testing.T) {
	if sys := os.Getenv(envOtherUser); sys != "" {
		unreadableDefaultConfig(t, os.Getenv("HOME"), sys)
		return
	}
	dir, err := os.MkdirTemp("", "zklock-config")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(filepath.Join(dir, "home"), 0o755); os.RemoveAll(dir) })
	home := filepath.Join(dir, "home")
	user := filepath.Join(home, ".config", "zklock", "config.toml")
	sys := filepath.Join(dir, "system.toml")
	if err := os.MkdirAll(filepath.Dir(user), 0o755); err != nil {
		t.Fatal(err)
	}
	for p, doc := range map[string]string{user: "servers = \"user:2181\"\n", sys: "servers = \"sys:2181\"\n"} {
		if err := os.WriteFile(p, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if os.Getuid() != 0 {
		if err := os.Chmod(home, 0); err != nil {
			t.Fatal(err)
		}
		unreadableDefaultConfig(t, home, sys)
		return
	}
	if err := os.Chmod(home, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "cmd.test")
	if err := os.WriteFile(bin, b, 0o755); err != nil {
		t.Fatal(err)
	}
	child := exec.CommandContext(t.Context(), "setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
		bin, "-test.run=^TestUnreadableDefaultConfig$", "-test.v")
	child.Dir = dir
	child.Env = append(os.Environ(), "HOME="+home, envOtherUser+"="+sys)
	out, err := child.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: TestUnreadableDefaultConfig") {
		t.Errorf("as nobody: %v\n%s", err, out)
	}
}

// unreadableDefaultConfig checks the settings of a user who may not read
// the user file under home.
func unreadableDefaultConfig(t *testing.T, home, sys string) {
	user := filepath.Join(home, ".config", "zklock", "config.toml")
	old := systemConfig
	systemConfig = sys
	t.Cleanup(func() { systemConfig = old })
	t.Setenv("HOME", home)
	for _, v := range []string{"XDG_CONFIG_HOME", envConfig, envServers, envAuth, envAuthFile, envTLSCA, envTLSCert, envTLSKey, envJAAS, envSASLPassword} {
		t.Setenv(v, "")
	}
	g, r, err := resolvedGlobal(t)
	if err != nil {
		t.Fatalf("an unreadable user file is an error: %v", err)
	}
	files := sys + "; skipped " + user + ": permission denied"
	if g.Servers != "sys:2181" || r.filesRead() != files {
		t.Errorf("servers %q from files %q; want sys:2181 from %q", g.Servers, r.filesRead(), files)
	}
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"config"}, &out, &errb); code != 0 || !strings.Contains(out.String(), "# files: "+files+"\n") || errb.Len() > 0 {
		t.Errorf("zklock config: exit %d, stderr %q, stdout\n%s", code, errb.String(), out.String())
	}
	t.Setenv(envConfig, user)
	out.Reset()
	code := run(context.Background(), []string{"config"}, &out, &errb)
	if want := "zklock: " + user + ": cannot read: "; code != ExitUsage || !strings.HasPrefix(errb.String(), want) ||
		!strings.Contains(errb.String(), "permission denied") || strings.Count(errb.String(), "\n") != 1 {
		t.Errorf("%s=%s: exit %d, stderr %q; want %d and one line %q…", envConfig, user, code, errb.String(), ExitUsage, want)
	}
}
