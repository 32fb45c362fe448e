package zkconn

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/go-zookeeper/zk"
	"github.com/zklock/zklock/internal/files"
)

// ErrBadAuth marks an --auth value that cannot be parsed.
var ErrBadAuth = errors.New("bad auth")

// Auth is a scheme and its credentials, as given to addAuth.
type Auth struct {
	Scheme      string
	Credentials string
}

// ParseAuth parses "digest:user:password" (the only scheme whose
// credentials a command line can carry), or "x509": the TLS client
// certificate is the identity (x509.go).
func ParseAuth(s string) (Auth, error) {
	if s == SchemeX509 {
		return Auth{Scheme: SchemeX509}, nil
	}
	scheme, cred, ok := strings.Cut(s, ":")
	if !ok || scheme == "" {
		return Auth{}, fmt.Errorf("%w: want digest:user:password", ErrBadAuth)
	}
	if scheme != "digest" {
		return Auth{}, fmt.Errorf("%w: scheme %q is not supported; use digest:user:password or x509", ErrBadAuth, scheme)
	}
	user, pass, ok := strings.Cut(cred, ":")
	if !ok || user == "" || pass == "" {
		return Auth{}, fmt.Errorf("%w: want digest:user:password", ErrBadAuth)
	}
	return Auth{Scheme: scheme, Credentials: cred}, nil
}

// User is the identity part of the credentials, safe to print.
func (a Auth) User() string {
	u, _, _ := strings.Cut(a.Credentials, ":")
	return u
}

// ACL returns the ACL for the nodes zklock creates. Without auth everything
// is open, as with any ZooKeeper client. With auth the creator keeps every
// right and everyone else may only read: `list` and `holders` keep working
// for other users, but nobody else can queue under a lock path or delete a
// holder's node (deleting a child needs DELETE on its parent).
func (a *Auth) ACL() []zk.ACL {
	if a == nil {
		return zk.WorldACL(zk.PermAll)
	}
	return []zk.ACL{
		{Perms: zk.PermAll, Scheme: "auth", ID: ""},
		{Perms: zk.PermRead, Scheme: "world", ID: "anyone"},
	}
}

// ReadAuthFile reads "digest:user:password" from a file, as --auth-file
// does (see readSecretLine for the checks).
func ReadAuthFile(name string) (Auth, error) {
	// The credentials given where their file's name belongs would be
	// echoed in every message about that "file": say so without them.
	if a, err := ParseAuth(name); err == nil && a.Scheme == "digest" {
		if _, err := os.Stat(name); err != nil {
			return Auth{}, fmt.Errorf("%w: the auth file's name has the form digest:user:password (not shown): give the name of a file that holds the credentials", ErrBadAuth)
		}
	}
	line, err := readSecretLine(name, files.AuthFile, "digest:user:password")
	if err != nil {
		return Auth{}, fmt.Errorf("%w: %v", ErrBadAuth, err)
	}
	a, err := ParseAuth(line)
	if err != nil {
		return Auth{}, fmt.Errorf("auth file %s: %w", name, err)
	}
	return a, nil
}

// ReadPasswordFile reads a password from a file (one line), as
// --sasl-password-file does, with the checks of readSecretLine.
func ReadPasswordFile(name string) (string, error) {
	line, err := readSecretLine(name, files.PasswordFile, "the password")
	if err != nil {
		return "", fmt.Errorf("%w: %v", ErrBadAuth, err)
	}
	if line == "" {
		return "", fmt.Errorf("%w: password file %s is empty", ErrBadAuth, name)
	}
	return line, nil
}

// readSecretLine reads the one line of a secret file of kind k, with the
// checks of files.Kind.Read: a regular file, small, and private to its
// owner, as ssh wants a private key. The file may end in a newline. want
// names its content.
func readSecretLine(name string, k files.Kind, want string) (string, error) {
	b, err := k.Read(name)
	if err != nil {
		return "", err
	}
	line := strings.TrimRight(string(b), "\r\n")
	if strings.ContainsAny(line, "\r\n") {
		return "", fmt.Errorf("%s %s holds more than one line; want %s", k.What, name, want)
	}
	return line, nil
}
