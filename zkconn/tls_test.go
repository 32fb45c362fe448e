package zkconn

import (
	"context"
	"crypto/tls"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/zklock/zklock/internal/testkit/zktest"
)

// pki is zktest's throwaway CA, with the checks of this package's x509
// tests as methods.
type pki struct{ zktest.PKI }

func newPKI(t *testing.T, names zktest.ServerNames) pki { return pki{zktest.NewPKI(t, names)} }

var ipOnly, dnsOnly = zktest.IPOnly, zktest.DNSOnly

func startTLS(ctx context.Context, t *testing.T, p pki, extra map[string]string) string {
	return zktest.StartTLS(ctx, t, p.PKI, extra)
}

// tlsConnect is the connect timeout of a TLS connect that is to succeed:
// a loaded machine stretches a JVM's TLS handshakes to seconds, past the
// default 5 s, and the bound costs a passing test nothing.
const tlsConnect = time.Minute

// clientTLS is the TLS configuration of a client with p's CA and client
// certificate.
func clientTLS(t *testing.T, p pki) *tls.Config {
	t.Helper()
	cfg, err := TLSFiles{CA: p.Path("ca.pem"), Cert: p.Path("client.crt"), Key: p.Path("client.key")}.Config()
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

	start := time.Now()
	c, err := Dial(ctx, Options{ConnString: secure, TLS: clientTLS(t, p), ConnectTimeout: tlsConnect})
	if err != nil {
		t.Fatalf("TLS with a client certificate: %v", err)
	}
	took := time.Since(start)
	if _, err := c.Children(ctx, "/"); err != nil {
		t.Fatal(err)
	}
	if c.NegotiatedTimeout() <= 0 || c.LastHeard().IsZero() {
		t.Errorf("the wire tracker sees nothing through TLS: timeout %s, last heard %v", c.NegotiatedTimeout(), c.LastHeard())
	}
	c.Close()

	// Each failing connect runs to its connect timeout (go-zookeeper
	// retries): give it what a handshake just took, thrice, so that at
	// least one handshake fails for its own reason and not for lack of
	// time.
	wait := max(time.Second, 3*took)
	t.Logf("the first connect took %v; the failing ones are given %v", took.Round(time.Millisecond), wait.Round(time.Millisecond))
	short := func(o Options) error {
		o.ConnString, o.ConnectTimeout = secure, wait
		_, err := Dial(ctx, o)
		return err
	}
	// Each failure is unavailable, and its one line names the cause.
	wrong := newPKI(t, ipOnly)
	bad, _ := TLSFiles{CA: wrong.Path("ca.pem"), Cert: p.Path("client.crt"), Key: p.Path("client.key")}.Config()
	noCert, _ := TLSFiles{CA: p.Path("ca.pem")}.Config()
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
	_, err = Dial(ctx, Options{ConnString: byName, TLS: clientTLS(t, p), ConnectTimeout: wait})
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

	start := time.Now()
	c, err := Dial(ctx, Options{ConnString: ConnString{Servers: []string{"localhost:" + port}}, TLS: clientTLS(t, p), ConnectTimeout: tlsConnect})
	took := time.Since(start)
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
		TLS: clientTLS(t, p), ConnectTimeout: max(time.Second, 3*took)})
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
		{CA: p.Path("missing.pem")},
		{CA: p.Path("client.key")},
		{Cert: p.Path("client.crt")},
		{Cert: p.Path("client.crt"), Key: p.Path("server.key")},
	} {
		if _, err := f.Config(); !errors.Is(err, ErrBadTLS) {
			t.Errorf("%+v: %v", f, err)
		}
	}
}
