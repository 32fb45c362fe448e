package sasl

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBadKrb5Conf: a krb5.conf that cannot be parsed is a configuration
// mistake, named with its file and line, and not a failure to reach
// anything (the login stops before any KDC is asked).
func TestBadKrb5Conf(t *testing.T) {
	for _, tc := range []struct {
		name, conf, want string
	}{
		{"no equals sign", "[libdefaults]\n default_realm = EX.COM\n\n garbage here # note\n",
			", line 4 is invalid: libdefaults section line (garbage here)"},
		{"bad duration", "# comment\n[libdefaults]\n ticket_lifetime = xyz\n",
			", line 3 is invalid: libdefaults section line (ticket_lifetime = xyz): invalid time duration value"},
		{"unpaired brace", "[realms]\n EX.COM = {\n  kdc = k\n }\n }\n",
			" is invalid: invalid Realms section in configuration"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "krb5.conf")
			if err := os.WriteFile(file, []byte(tc.conf), 0o644); err != nil {
				t.Fatal(err)
			}
			t.Setenv("KRB5_CONFIG", file)
			err := (&KerberosLogin{Client: "c@EX.COM", CCache: filepath.Join(t.TempDir(), "none")}).Login()
			var ce *Krb5ConfError
			if !errors.Is(err, ErrBadKrb5Conf) || !errors.As(err, &ce) {
				t.Fatalf("Login: %v, want an ErrBadKrb5Conf", err)
			}
			if want := "Kerberos configuration " + file + tc.want; err.Error() != want {
				t.Errorf("Login: %q\nwant      %q", err, want)
			}
		})
	}
}

// TestUnsupportedKrb5Directive: gokrb5 parses a krb5.conf with a directive
// it does not support (Kerberos 4's) and says so; the rest of the file is
// still good, so the login goes on (here to the missing ticket cache).
func TestUnsupportedKrb5Directive(t *testing.T) {
	file := filepath.Join(t.TempDir(), "krb5.conf")
	conf := "[libdefaults]\n default_realm = EX.COM\n[realms]\n EX.COM = {\n  kdc = 127.0.0.1:1\n  v4_instance_convert = {\n   a = b\n  }\n }\n"
	if err := os.WriteFile(file, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("KRB5_CONFIG", file)
	err := (&KerberosLogin{Client: "c@EX.COM", CCache: filepath.Join(t.TempDir(), "none")}).Login()
	if err == nil || errors.Is(err, ErrBadKrb5Conf) || !strings.Contains(err.Error(), "ticket cache") {
		t.Errorf("Login: %v, want the ticket cache's error", err)
	}
}
