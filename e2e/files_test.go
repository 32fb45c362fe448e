package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zklock/zklock/internal/files"
	"github.com/zklock/zklock/internal/testkit/zktest"
)

// TestFileInputsBounded: every file zklock reads by name is refused at
// once, with exit 64, one line naming the kind of file and nothing left in
// ZooKeeper, when it is a FIFO (which would block the open or the read),
// a device that never ends (/dev/zero, which grew zklock to gigabytes), a
// file over its kind's cap, or, for a secret, a file its group may read.
func TestFileInputsBounded(t *testing.T) {
	path := lockPath(t)
	dir := t.TempDir()
	p := zktest.NewPKI(t, zktest.IPOnly)
	write := func(name, text string, mode os.FileMode) string {
		f := filepath.Join(dir, name)
		if err := os.WriteFile(f, []byte(text), mode); err != nil {
			t.Fatal(err)
		}
		return f
	}
	krb5conf := write("krb5.conf", "[libdefaults]\n default_realm = EXAMPLE.ORG\n[realms]\n EXAMPLE.ORG = {\n  kdc = 127.0.0.1:1\n }\n", 0o644)
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	digestJAAS := `Client { org.apache.zookeeper.server.auth.DigestLoginModule required username="u" password="p"; };`
	for _, tc := range []struct {
		kind files.Kind
		// args and env name the file @ (replaced by the file under test).
		args []string
		env  []string
		// secret is the content of a valid file of the kind that holds a
		// secret ("" for a kind that holds none).
		secret string
	}{
		{files.Config, nil, []string{"ZKLOCK_CONFIG=@"}, ""},
		{files.AuthFile, []string{"--auth-file", "@"}, nil, "digest:u:p"},
		{files.PasswordFile, []string{"--sasl", "digest", "--sasl-principal", "u", "--sasl-password-file", "@"}, nil, "p"},
		{files.TLSCA, []string{"--tls-ca", "@"}, nil, ""},
		{files.TLSCert, []string{"--tls-cert", "@", "--tls-key", p.Path("client.key")}, nil, ""},
		{files.TLSKey, []string{"--tls-cert", p.Path("client.crt"), "--tls-key", "@"}, nil, "key"},
		{files.JAAS, []string{"--jaas", "@"}, nil, digestJAAS},
		{files.Krb5Conf, []string{"--sasl", "gssapi"}, []string{"KRB5_CONFIG=@"}, ""},
		{files.Keytab, []string{"--sasl", "gssapi", "--sasl-principal", "u", "--keytab", "@"}, []string{"KRB5_CONFIG=" + krb5conf}, "keytab"},
		{files.TicketCache, []string{"--sasl", "gssapi"}, []string{"KRB5_CONFIG=" + krb5conf, "KRB5CCNAME=FILE:@"}, "cache"},
	} {
		big := filepath.Join(dir, "big")
		if err := os.Truncate(big, 0); err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		f, err := os.Create(big)
		if err == nil {
			err = f.Truncate(tc.kind.Max + 1) // sparse: no disk, no time
			f.Close()
		}
		if err != nil {
			t.Fatal(err)
		}
		cases := []struct{ file, says string }{
			{fifo, "is not a regular file"},
			{"/dev/zero", "is not a regular file"},
			{dir, "is a directory"},
			{big, "is larger than"},
		}
		if tc.secret != "" {
			if tc.kind.What == files.TLSKey.What {
				b, _ := os.ReadFile(p.Path("client.key"))
				tc.secret = string(b)
			}
			leaked := write(strings.ReplaceAll(tc.kind.What, " ", "-")+".leaked", tc.secret, 0o644)
			if err := os.Chmod(leaked, 0o644); err != nil {
				t.Fatal(err)
			}
			cases = append(cases, struct{ file, says string }{leaked, "is accessible by group or others (mode 0644); run chmod 600 " + leaked})
		}
		for _, c := range cases {
			args := append([]string(nil), tc.args...)
			for i := range args {
				args[i] = strings.ReplaceAll(args[i], "@", c.file)
			}
			cmd := zklock(t, append(args, "run", "--path", path, "--", "true")...)
			for _, e := range tc.env {
				cmd.Env = append(cmd.Env, strings.ReplaceAll(e, "@", c.file))
			}
			start := time.Now()
			r := runWithin(t, 20*time.Second, cmd)
			want := tc.kind.What + " " + c.file + " " + c.says
			if tc.kind.What == files.Config.What {
				want = c.file + ": " + c.says // as every configuration error: FILE: problem
			}
			if r.code != 64 || strings.Count(r.stderr, "\n") != 1 || !strings.HasPrefix(r.stderr, "zklock: ") || !strings.Contains(r.stderr, want) {
				t.Errorf("%s %s: exit %d after %s, stderr %q; want 64 and one line saying %q",
					tc.kind.What, c.file, r.code, time.Since(start).Round(time.Millisecond), r.stderr, want)
			}
		}
	}
	if ok, _, err := rawZK(t).Exists(path); err != nil || ok {
		t.Errorf("%s exists (%v) after refusals", path, err)
	}
}
