package zktest

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// SASLOptions are Options for a server that demands SASL: the SASL
// authentication provider, enforce.auth for the sasl scheme, and the JVM
// told where the server's JAAS file is. jvmFlags add more (e.g. a Kerberos
// configuration).
func SASLOptions(serverJAAS string, jvmFlags ...string) Options {
	return Options{
		ExtraConfig: map[string]string{
			"authProvider.1":       "org.apache.zookeeper.server.auth.SASLAuthenticationProvider",
			"enforce.auth.enabled": "true",
			"enforce.auth.schemes": "sasl",
		},
		ExtraJVMFlags: append([]string{"-Djava.security.auth.login.config=" + serverJAAS}, jvmFlags...),
	}
}

// WriteDigestServerJAAS writes, in dir, a server JAAS file whose Server
// section lets users log in with DIGEST-MD5 (user → password), and returns
// its path.
func WriteDigestServerJAAS(dir string, users map[string]string) (string, error) {
	names := make([]string, 0, len(users))
	for u := range users {
		names = append(names, u)
	}
	sort.Strings(names)
	var b strings.Builder
	b.WriteString("Server {\n  org.apache.zookeeper.server.auth.DigestLoginModule required")
	for _, u := range names {
		fmt.Fprintf(&b, "\n  user_%s=%q", u, users[u])
	}
	b.WriteString(";\n};\n")
	return writeJAAS(dir, "server-digest.jaas", b.String())
}

func writeJAAS(dir, name, text string) (string, error) {
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
		return "", err
	}
	return p, nil
}
