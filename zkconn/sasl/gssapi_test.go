package sasl

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/jcmturner/gokrb5/v8/iana/etypeID"
	"github.com/jcmturner/gokrb5/v8/keytab"

	"github.com/zklock/zklock/zkconn"
)

// TestLoginEndsWithContext: a KDC that takes requests and never answers
// holds Kerberos's login for its timeouts, UDP then TCP, for each KDC of
// the realm in turn (30 s for three). The login takes no context, so the
// signal that cancels Dial's must not wait for it: zklock must end at
// once, as it does while it waits for a lock.
func TestLoginEndsWithContext(t *testing.T) {
	dir := t.TempDir()
	// The silent KDC: a TCP port that accepts, a UDP port that reads.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	port := l.Addr().(*net.TCPAddr).Port
	u, err := net.ListenPacket("udp", fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		t.Fatal(err)
	}
	defer u.Close()
	conf := filepath.Join(dir, "krb5.conf")
	kdc := fmt.Sprintf("  kdc = 127.0.0.1:%d\n", port)
	if err := os.WriteFile(conf, []byte("[libdefaults]\n default_realm = EX.COM\n[realms]\n EX.COM = {\n"+kdc+kdc+kdc+" }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("KRB5_CONFIG", conf)
	kt := keytab.New()
	if err := kt.AddEntry("zk", "EX.COM", "secret", time.Now(), 1, etypeID.AES256_CTS_HMAC_SHA1_96); err != nil {
		t.Fatal(err)
	}
	b, err := kt.Marshal()
	if err == nil {
		err = os.WriteFile(filepath.Join(dir, "zk.keytab"), b, 0o600)
	}
	if err != nil {
		t.Fatal(err)
	}
	cs, err := zkconn.ParseConnString("127.0.0.1:1")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	time.AfterFunc(500*time.Millisecond, cancel)
	start := time.Now()
	_, err = zkconn.Dial(ctx, zkconn.Options{ConnString: cs, SASL: &KerberosLogin{Client: "zk@EX.COM", Keytab: filepath.Join(dir, "zk.keytab")}})
	if took := time.Since(start); took > 3*time.Second || !errors.Is(err, context.Canceled) {
		t.Errorf("Dial returned after %s (cancelled after 0.5s): %v", took.Round(time.Millisecond), err)
	}
}
