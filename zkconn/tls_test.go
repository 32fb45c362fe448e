package zkconn

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/zklock/zklock/internal/zktest"
)

// pki is a throwaway CA with a server certificate for 127.0.0.1 and a
// client certificate, written as PEM files.
type pki struct{ dir string }

func (p pki) path(name string) string { return filepath.Join(p.dir, name) }

func newPKI(t *testing.T) pki {
	t.Helper()
	p := pki{dir: t.TempDir()}
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "zklock test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	p.write(t, "ca.pem", pemBlock("CERTIFICATE", caDER))
	caPK, _ := x509.MarshalPKCS8PrivateKey(caKey)
	p.write(t, "ca.key", pemBlock("PRIVATE KEY", caPK))
	leaf := func(name string, serial int64, usage x509.ExtKeyUsage) {
		key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		tmpl := &x509.Certificate{SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: name},
			NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
			IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, ExtKeyUsage: []x509.ExtKeyUsage{usage},
			KeyUsage: x509.KeyUsageDigitalSignature}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
		if err != nil {
			t.Fatal(err)
		}
		pk, _ := x509.MarshalPKCS8PrivateKey(key)
		p.write(t, name+".crt", pemBlock("CERTIFICATE", der))
		p.write(t, name+".key", pemBlock("PRIVATE KEY", pk))
		// ZooKeeper's PEM key store wants key and certificate in one file.
		p.write(t, name+".pem", append(pemBlock("PRIVATE KEY", pk), pemBlock("CERTIFICATE", der)...))
	}
	leaf("server", 2, x509.ExtKeyUsageServerAuth)
	leaf("client", 3, x509.ExtKeyUsageClientAuth)
	return p
}

func pemBlock(typ string, der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der})
}

func (p pki) write(t *testing.T, name string, b []byte) {
	if err := os.WriteFile(p.path(name), b, 0o600); err != nil {
		t.Fatal(err)
	}
}

func freePort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// startTLSServer starts a server whose secureClientPort demands a client
// certificate from p's CA, with extra zoo.cfg entries, and returns its
// connect string.
func startTLSServer(ctx context.Context, t *testing.T, p pki, extra map[string]string) ConnString {
	t.Helper()
	port := freePort(t)
	cfg := map[string]string{
		"serverCnxnFactory":               "org.apache.zookeeper.server.NettyServerCnxnFactory",
		"secureClientPort":                strconv.Itoa(port),
		"secureClientPortAddress":         "127.0.0.1",
		"ssl.keyStore.location":           p.path("server.pem"),
		"ssl.keyStore.type":               "PEM",
		"ssl.trustStore.location":         p.path("ca.pem"),
		"ssl.trustStore.type":             "PEM",
		"ssl.clientAuth":                  "need",
		"ssl.hostnameVerification":        "false",
		"ssl.quorum.hostnameVerification": "false",
	}
	for k, v := range extra {
		cfg[k] = v
	}
	srv, err := zktest.StartStandalone(ctx, zktest.Options{ExtraConfig: cfg})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Stop() })
	return ConnString{Servers: []string{"127.0.0.1:" + strconv.Itoa(port)}}
}

// TestTLS connects to a real server's secureClientPort, which demands a
// client certificate, and checks that plain TCP and a wrong CA fail.
func TestTLS(t *testing.T) {
	p := newPKI(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	secure := startTLSServer(ctx, t, p, nil)

	cfg, err := TLSFiles{CA: p.path("ca.pem"), Cert: p.path("client.crt"), Key: p.path("client.key")}.Config()
	if err != nil {
		t.Fatal(err)
	}
	c, err := Dial(ctx, Options{ConnString: secure, TLS: cfg})
	if err != nil {
		t.Fatalf("TLS with a client certificate: %v", err)
	}
	if _, err := c.Children(ctx, "/"); err != nil {
		t.Fatal(err)
	}
	if c.NegotiatedTimeout() <= 0 || c.LastHeard().IsZero() {
		t.Errorf("the wire tracker sees nothing through TLS: timeout %s, last heard %v", c.NegotiatedTimeout(), c.LastHeard())
	}
	c.Close()

	short := func(o Options) error {
		o.ConnString, o.ConnectTimeout = secure, time.Second
		_, err := Dial(ctx, o)
		return err
	}
	if err := short(Options{}); !errors.Is(err, ErrUnavailable) {
		t.Errorf("plain TCP to the secure port: %v", err)
	}
	wrong := newPKI(t)
	bad, _ := TLSFiles{CA: wrong.path("ca.pem"), Cert: p.path("client.crt"), Key: p.path("client.key")}.Config()
	if err := short(Options{TLS: bad}); !errors.Is(err, ErrUnavailable) {
		t.Errorf("TLS with the wrong CA: %v", err)
	}
	noCert, _ := TLSFiles{CA: p.path("ca.pem")}.Config()
	if err := short(Options{TLS: noCert}); !errors.Is(err, ErrUnavailable) {
		t.Errorf("TLS without the client certificate the server demands: %v", err)
	}
}

func TestTLSFilesErrors(t *testing.T) {
	p := newPKI(t)
	for _, f := range []TLSFiles{
		{CA: p.path("missing.pem")},
		{CA: p.path("client.key")},
		{Cert: p.path("client.crt")},
		{Cert: p.path("client.crt"), Key: p.path("server.key")},
	} {
		if _, err := f.Config(); !errors.Is(err, ErrBadTLS) {
			t.Errorf("%+v: %v", f, err)
		}
	}
}
