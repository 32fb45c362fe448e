package zkconn

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/zklock/zklock/internal/zktest"
)

// pki is a throwaway CA with a server certificate and a client
// certificate, written as PEM files.
type pki struct{ dir string }

func (p pki) path(name string) string { return filepath.Join(p.dir, name) }

// serverNames are the subject alternative names of a server certificate.
type serverNames struct {
	dns []string
	ips []net.IP
}

var (
	ipOnly  = serverNames{ips: []net.IP{net.ParseIP("127.0.0.1")}}
	dnsOnly = serverNames{dns: []string{"localhost"}}
)

func newPKI(t *testing.T, names serverNames) pki {
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
	leaf := func(name string, serial int64, usage x509.ExtKeyUsage, sans serverNames) {
		key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		tmpl := &x509.Certificate{SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: name},
			NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
			DNSNames: sans.dns, IPAddresses: sans.ips, ExtKeyUsage: []x509.ExtKeyUsage{usage},
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
	leaf("server", 2, x509.ExtKeyUsageServerAuth, names)
	leaf("client", 3, x509.ExtKeyUsageClientAuth, ipOnly)
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

// startTLS starts a server whose secureClientPort, on 127.0.0.1, presents
// p's server certificate and demands a client certificate, with extra
// zoo.cfg entries. It returns the port.
func startTLS(ctx context.Context, t *testing.T, p pki, extra map[string]string) string {
	t.Helper()
	port := strconv.Itoa(freePort(t))
	cfg := map[string]string{
		"serverCnxnFactory":               "org.apache.zookeeper.server.NettyServerCnxnFactory",
		"secureClientPort":                port,
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
	return port
}

// clientTLS is the TLS configuration of a client with p's CA and client
// certificate.
func clientTLS(t *testing.T, p pki) *tls.Config {
	t.Helper()
	cfg, err := TLSFiles{CA: p.path("ca.pem"), Cert: p.path("client.crt"), Key: p.path("client.key")}.Config()
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// TestTLS connects to a real server's secureClientPort, which demands a
// client certificate, and checks that plain TCP and a wrong CA fail. The
// server's certificate names only the IP address 127.0.0.1: written as an
// IP, the server is verified; written as a name, it is not.
func TestTLS(t *testing.T) {
	p := newPKI(t, ipOnly)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	port := startTLS(ctx, t, p, nil)
	secure := ConnString{Servers: []string{"127.0.0.1:" + port}}

	c, err := Dial(ctx, Options{ConnString: secure, TLS: clientTLS(t, p)})
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
	// Each failure is unavailable, and its one line names the cause.
	wrong := newPKI(t, ipOnly)
	bad, _ := TLSFiles{CA: wrong.path("ca.pem"), Cert: p.path("client.crt"), Key: p.path("client.key")}.Config()
	noCert, _ := TLSFiles{CA: p.path("ca.pem")}.Config()
	for _, tc := range []struct {
		name    string
		o       Options
		problem TLSProblem
		want    []string
	}{
		{"plain TCP to the secure port", Options{}, TLSOther, []string{"closed the connection during the handshake", "a TLS-only port?"}},
		{"TLS with the wrong CA", Options{TLS: bad}, TLSUntrusted, []string{"TLS handshake with 127.0.0.1:" + port + " failed", "certificate signed by unknown authority"}},
		{"TLS without the client certificate the server demands", Options{TLS: noCert}, TLSClientRefused, []string{"TLS handshake with 127.0.0.1:" + port + " failed", "tls: "}},
	} {
		err := short(tc.o)
		var te *TLSError
		if tc.o.TLS != nil && (!errors.As(err, &te) || te.Problem != tc.problem) {
			t.Errorf("%s: %v is not a TLSError with problem %d", tc.name, err, tc.problem)
		}
		if !errors.Is(err, ErrUnavailable) {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %q does not say %q", tc.name, err, w)
			}
		}
	}

	byName := ConnString{Servers: []string{"localhost:" + port}}
	_, err = Dial(ctx, Options{ConnString: byName, TLS: clientTLS(t, p), ConnectTimeout: time.Second})
	wantTLSMismatch(t, err, "localhost")
}

// TestTLSHostName: a certificate that names the server only by its DNS name,
// as most ZooKeeper certificates do, verifies when the connect string names
// the host, although the connection goes to a resolved address; written as
// an IP, the same server is refused.
func TestTLSHostName(t *testing.T) {
	p := newPKI(t, dnsOnly)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	port := startTLS(ctx, t, p, nil)

	c, err := Dial(ctx, Options{ConnString: ConnString{Servers: []string{"localhost:" + port}}, TLS: clientTLS(t, p)})
	if err != nil {
		t.Fatalf("a certificate for localhost, connecting to localhost: %v", err)
	}
	if _, err := c.Children(ctx, "/"); err != nil {
		t.Fatal(err)
	}
	if got := c.Server(); got != "localhost:"+port {
		t.Errorf("connected to %q, want the server as written", got)
	}
	c.Close()

	_, err = Dial(ctx, Options{ConnString: ConnString{Servers: []string{"127.0.0.1:" + port}},
		TLS: clientTLS(t, p), ConnectTimeout: time.Second})
	wantTLSMismatch(t, err, "127.0.0.1")
}

// wantTLSMismatch checks that a connect refused for a certificate that does
// not name the server fails as unavailable, and says why in its one line.
func wantTLSMismatch(t *testing.T, err error, host string) {
	t.Helper()
	var te *TLSError
	if !errors.Is(err, ErrUnavailable) || !errors.As(err, &te) || te.Problem != TLSNameMismatch {
		t.Fatalf("a certificate that does not name %s: %v", host, err)
	}
	msg := err.Error()
	t.Log(msg)
	if !strings.Contains(msg, "certificate") || !strings.Contains(msg, host) || strings.Contains(msg, "\n") {
		t.Errorf("the error does not name the TLS failure: %q", msg)
	}
}

func TestTLSFilesErrors(t *testing.T) {
	p := newPKI(t, ipOnly)
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
