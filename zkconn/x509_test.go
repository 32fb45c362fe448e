package zkconn

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"encoding/pem"
	"errors"
	"math/big"
	"os"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
)

// clientCert issues a client certificate for subject from p's CA.
func (p pki) clientCert(t *testing.T, subject pkix.Name, serial int64) tls.Certificate {
	t.Helper()
	caPEM, _ := os.ReadFile(p.Path("ca.pem"))
	keyPEM, _ := os.ReadFile(p.Path("ca.key"))
	cb, _ := pem.Decode(caPEM)
	kb, _ := pem.Decode(keyPEM)
	ca, err := x509.ParseCertificate(cb.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	caKey, err := x509.ParsePKCS8PrivateKey(kb.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(serial), Subject: subject,
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}, KeyUsage: x509.KeyUsageDigitalSignature}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// TestX509DN: subjects written as Java's X500Principal.getName() writes
// them (the form of ZooKeeper's x509 ids).
func TestX509DN(t *testing.T) {
	email := asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 9, 1}
	for _, tc := range []struct {
		name pkix.Name
		want string
	}{
		{pkix.Name{CommonName: "client"}, "CN=client"},
		{pkix.Name{CommonName: "ops, one", Organization: []string{"zk+lock"}, OrganizationalUnit: []string{"#1"}, Country: []string{"DE"}},
			`CN=ops\, one,OU=\#1,O=zk\+lock,C=DE`},
		{pkix.Name{CommonName: " pad ", ExtraNames: []pkix.AttributeTypeAndValue{{Type: email, Value: "a@b"}}},
			`1.2.840.113549.1.9.1=#0c03614062,CN=\ pad\ `},
	} {
		der, err := asn1.Marshal(tc.name.ToRDNSequence())
		if err != nil {
			t.Fatal(err)
		}
		got, err := x509SubjectDN(der)
		if err != nil || got != tc.want {
			t.Errorf("%v: %q, %v; want %q", tc.name, got, err, tc.want)
		}
	}
}

// TestX509Auth: with a client certificate and x509 auth, the nodes zklock
// creates belong to x509:<subject DN>, in the exact form the server's x509
// provider gives the connection: the owner can create under its node, a
// client holding another certificate of the same CA can read but cannot.
func TestX509Auth(t *testing.T) {
	p := newPKI(t, ipOnly)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	secure := ConnString{Servers: []string{"127.0.0.1:" + startTLS(ctx, t, p, map[string]string{
		"authProvider.x509": "org.apache.zookeeper.server.auth.X509AuthenticationProvider",
	})}}
	dial := func(cert tls.Certificate) *Client {
		t.Helper()
		cfg, err := TLSFiles{CA: p.Path("ca.pem")}.Config()
		if err != nil {
			t.Fatal(err)
		}
		cfg.Certificates = []tls.Certificate{cert}
		c, err := Dial(ctx, Options{ConnString: secure, TLS: cfg, Auth: &Auth{Scheme: SchemeX509}, ConnectTimeout: tlsConnect})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(c.Close)
		return c
	}
	owner := dial(p.clientCert(t, pkix.Name{CommonName: "lock owner, ops", Organization: []string{"zklock"}}, 10))
	if _, err := owner.Create(ctx, "/x509", nil, zk.FlagPersistent); err != nil {
		t.Fatal(err)
	}
	acl, _, err := owner.conn.GetACL("/x509")
	if err != nil {
		t.Fatal(err)
	}
	if len(acl) != 2 || acl[0] != (zk.ACL{Perms: zk.PermAll, Scheme: "x509", ID: `CN=lock owner\, ops,O=zklock`}) {
		t.Errorf("ACL %+v", acl)
	}
	if _, err := owner.Create(ctx, "/x509/mine", nil, zk.FlagEphemeral); err != nil {
		t.Errorf("the owner under its own node: %v", err)
	}
	other := dial(p.clientCert(t, pkix.Name{CommonName: "someone else", Organization: []string{"zklock"}}, 11))
	if _, _, err := other.Get(ctx, "/x509"); err != nil {
		t.Errorf("another certificate reads: %v", err)
	}
	if _, err := other.Create(ctx, "/x509/theirs", nil, zk.FlagEphemeral); !errors.Is(err, zk.ErrNoAuth) || !IsPermission(err) {
		t.Errorf("another certificate creates under the owner's node: %v", err)
	}
	if err := other.Delete(ctx, "/x509/mine"); !errors.Is(err, zk.ErrNoAuth) {
		t.Errorf("another certificate deletes the owner's node: %v", err)
	}
	if _, err := Dial(ctx, Options{ConnString: secure, Auth: &Auth{Scheme: SchemeX509}}); !errors.Is(err, ErrBadAuth) {
		t.Errorf("x509 without a certificate: %v", err)
	}
}
