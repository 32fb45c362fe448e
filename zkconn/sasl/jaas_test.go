package sasl

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReadJAAS(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "jaas.conf")
	src := `// Kafka's and ZooKeeper's sections side by side
KafkaServer { org.apache.kafka.common.security.plain.PlainLoginModule required username="k" password="p"; };
Client {
  org.apache.zookeeper.server.auth.DigestLoginModule required
  username="bob"
  password="s\"e;c{r}et";
};
Krb {
  com.sun.security.auth.module.Krb5LoginModule required
  useKeyTab=true
  keyTab="/etc/zk/client.keytab" /* a comment */
  storeKey=true
  principal="client@EXAMPLE.ORG";
};
Cache { com.sun.security.auth.module.Krb5LoginModule required useTicketCache=true; };
NoKey { org.apache.zookeeper.server.auth.DigestLoginModule required username="bob"; };
NoKeytab { com.sun.security.auth.module.Krb5LoginModule required useKeyTab=true principal="c"; };
Prompt { com.sun.security.auth.module.Krb5LoginModule required principal="c"; };
`
	if err := os.WriteFile(file, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	l, err := ReadJAAS(file, "Client")
	if d, ok := l.(*DigestLogin); err != nil || !ok || d.Username != "bob" || d.Password != `s"e;c{r}et` {
		t.Errorf("Client = %#v, %v", l, err)
	}
	l, err = ReadJAAS(file, "Krb")
	if k, ok := l.(*KerberosLogin); err != nil || !ok || k.Client != "client@EXAMPLE.ORG" || k.Keytab != "/etc/zk/client.keytab" {
		t.Errorf("Krb = %#v, %v", l, err)
	}
	l, err = ReadJAAS(file, "Cache")
	if k, ok := l.(*KerberosLogin); err != nil || !ok || k.Keytab != "" || k.Client != "" {
		t.Errorf("Cache = %#v, %v", l, err)
	}
	for _, tc := range []struct{ section, want string }{
		{"KafkaServer", "section KafkaServer, login module org.apache.kafka.common.security.plain.PlainLoginModule: not supported"},
		{"NoKey", "section NoKey, key password: missing"},
		{"NoKeytab", "section NoKeytab, key keyTab: missing"},
		{"Prompt", "section Prompt, key useKeyTab: missing"},
		{"Server", "section Server: no such section"},
	} {
		_, err := ReadJAAS(file, tc.section)
		if !errors.Is(err, ErrBadJAAS) || !strings.Contains(err.Error(), "JAAS file "+file+", "+tc.want) {
			t.Errorf("%s: %v, want %q", tc.section, err, tc.want)
		}
	}
	for _, bad := range []string{`Client {`, `Client { m required a="b" };`, `Client { m required a= ; };`, `Client { m; };`, `x = y`} {
		if err := os.WriteFile(file, []byte(bad), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := ReadJAAS(file, "Client"); !errors.Is(err, ErrBadJAAS) {
			t.Errorf("%q: %v", bad, err)
		}
	}
}

// TestDocumentedJAASFiles: the sample JAAS files the guide shows
// (testdata/jaas) log in as they say. A JAAS file holds a secret, so it is
// read from a private copy.
func TestDocumentedJAASFiles(t *testing.T) {
	private := func(name string) string {
		b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "jaas", name))
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(t.TempDir(), name)
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	l, err := ReadJAAS(private("digest.jaas"), DefaultJAASSection)
	if d, ok := l.(*DigestLogin); err != nil || !ok || d.Username != "bob" || d.Password != "bob-secret" {
		t.Errorf("digest.jaas: %#v, %v", l, err)
	}
	l, err = ReadJAAS(private("keytab.jaas"), DefaultJAASSection)
	if k, ok := l.(*KerberosLogin); err != nil || !ok || k.Client != "app@EXAMPLE.ORG" || k.Keytab != "/etc/security/keytabs/app.keytab" {
		t.Errorf("keytab.jaas: %#v, %v", l, err)
	}
}
