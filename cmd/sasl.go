package cmd

import (
	"fmt"
	"os"

	"github.com/spf13/pflag"
	"github.com/zklock/zklock/zkconn"
	"github.com/zklock/zklock/zkconn/sasl"
)

// Environment variables for SASL.
const (
	envJAAS         = "ZKLOCK_JAAS"
	envSASLPassword = "ZKLOCK_SASL_PASSWORD"
)

// saslMech is the value of --sasl: a mechanism, checked at parse time.
type saslMech string

const (
	saslDigest saslMech = "digest"
	saslGSSAPI saslMech = "gssapi"
)

func (m *saslMech) String() string { return string(*m) }
func (m *saslMech) Type() string   { return "digest|gssapi" }

func (m *saslMech) Choices() []string { return []string{string(saslDigest), string(saslGSSAPI)} }

func (m *saslMech) Set(s string) error {
	switch saslMech(s) {
	case saslDigest, saslGSSAPI:
		*m = saslMech(s)
		return nil
	}
	return fmt.Errorf("want digest (DIGEST-MD5) or gssapi (Kerberos), not %q", s)
}

// saslOptions are the SASL flags: a JAAS file, or the mechanism and its
// credentials given directly.
type saslOptions struct {
	JAAS         string // --jaas or ZKLOCK_JAAS
	JAASSection  string
	Mech         saslMech
	Principal    string
	PasswordFile string
	Password     string // from ZKLOCK_SASL_PASSWORD only, never argv
	Keytab       string
	Service      string
}

func (s *saslOptions) addFlags(pf *pflag.FlagSet) {
	pf.StringVar(&s.JAAS, "jaas", "", "log in with SASL as the JAAS file's Client section says, the file Java clients use (env "+envJAAS+")")
	pf.StringVar(&s.JAASSection, "jaas-section", sasl.DefaultJAASSection, "the section of the --jaas file to read")
	pf.Var(&s.Mech, "sasl", "log in with SASL without a JAAS file: digest (DIGEST-MD5) or gssapi (Kerberos)")
	pf.StringVar(&s.Principal, "sasl-principal", "", "--sasl digest: the user; --sasl gssapi: the client principal (default: the ticket cache's)")
	pf.StringVar(&s.PasswordFile, "sasl-password-file", "", "--sasl digest: file holding the password, readable by its owner only, or root-owned and group-readable (or env "+envSASLPassword+")")
	pf.StringVar(&s.Keytab, "keytab", "", "--sasl gssapi: log in from this keytab (default: the ticket cache, KRB5CCNAME)")
	pf.StringVar(&s.Service, "sasl-service", sasl.DefaultService, "Kerberos service name of the servers: their principal is SERVICE/host (Java's zookeeper.sasl.client.username)")
}

// passwordFromEnv reads the password at run time, so --help never shows it,
// and removes it from zklock's environment, so the command under the lock
// never sees it.
func (s *saslOptions) passwordFromEnv() {
	s.Password = os.Getenv(envSASLPassword)
	os.Unsetenv(envSASLPassword)
}

// login builds the SASL login the flags describe, or nil for none. given
// says whether a flag was given on the command line.
func (s *saslOptions) login(given func(flag string) bool) (zkconn.SASLLogin, error) {
	if err := s.unread(given); err != nil {
		return nil, err
	}
	if s.JAAS != "" && s.Mech != "" {
		return nil, usageErrorf("--jaas and --sasl do not combine: the JAAS file names the mechanism")
	}
	var l zkconn.SASLLogin
	switch {
	case s.JAAS != "":
		var err error
		if l, err = sasl.ReadJAAS(s.JAAS, s.JAASSection); err != nil {
			return nil, &UsageError{Err: err}
		}
	case s.Mech == saslDigest:
		if s.Principal == "" {
			return nil, usageErrorf("--sasl digest needs --sasl-principal, the user name")
		}
		pw := s.Password
		if s.PasswordFile != "" {
			var err error
			if pw, err = zkconn.ReadPasswordFile(s.PasswordFile); err != nil {
				return nil, &UsageError{Err: err}
			}
		}
		if pw == "" {
			return nil, usageErrorf("--sasl digest needs a password: --sasl-password-file or %s", envSASLPassword)
		}
		l = &sasl.DigestLogin{Username: s.Principal, Password: pw}
	case s.Mech == saslGSSAPI:
		if s.Keytab != "" && s.Principal == "" {
			return nil, usageErrorf("--keytab needs --sasl-principal, the principal whose key it holds")
		}
		l = &sasl.KerberosLogin{Client: s.Principal, Keytab: s.Keytab}
	default:
		return nil, nil
	}
	if k, ok := l.(*sasl.KerberosLogin); ok {
		k.Service = s.Service
	}
	return l, nil
}

// unread refuses a SASL setting given on the command line that the login
// in use would not read: it would pass in silence, and the session would
// log in some other way than the user meant, or not at all. A JAAS file
// names everything itself. A configuration file may well keep settings
// for the times a login is asked for, and is not second-guessed.
func (s *saslOptions) unread(given func(flag string) bool) error {
	if s.JAAS != "" {
		return nil
	}
	switch s.Mech {
	case "":
		for _, f := range []struct{ flag, value string }{
			{"--sasl-principal", s.Principal}, {"--sasl-password-file", s.PasswordFile}, {"--keytab", s.Keytab},
		} {
			if f.value != "" && given(f.flag) {
				return usageErrorf("%s is a setting of a SASL login: give --sasl (digest or gssapi) too, or drop it", f.flag)
			}
		}
	case saslDigest:
		if s.Keytab != "" && given("--keytab") {
			return usageErrorf("--keytab is for --sasl gssapi, not digest")
		}
	case saslGSSAPI:
		if s.PasswordFile != "" && given("--sasl-password-file") {
			return usageErrorf("--sasl-password-file is for --sasl digest, not gssapi")
		}
	}
	return nil
}
