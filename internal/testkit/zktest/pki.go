package zktest

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// PKI is a throwaway CA with a server certificate and a client
// certificate, written as PEM files.
type PKI struct{ dir string }

// Path is the file name of one of its PEM files: ca.pem, ca.key; server.crt,
// server.key, server.pem (key and certificate, as ZooKeeper's PEM key store
// wants them); client.crt, client.key, client.pem.
func (p PKI) Path(name string) string { return filepath.Join(p.dir, name) }

// ServerNames are the subject alternative names of a server certificate.
type ServerNames struct {
	DNS []string
	IPs []net.IP
}

var (
	// IPOnly names the server 127.0.0.1 and nothing else.
	IPOnly = ServerNames{IPs: []net.IP{net.ParseIP("127.0.0.1")}}
	// DNSOnly names the server localhost and nothing else.
	DNSOnly = ServerNames{DNS: []string{"localhost"}}
)

// NewPKI makes a CA, a server certificate with names and a client
// certificate (CN client, for 127.0.0.1), in a temporary directory.
func NewPKI(t TB, names ServerNames) PKI {
	t.Helper()
	dir, err := os.MkdirTemp("", "zktest-pki-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	p := PKI{dir: dir}
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
	leaf := func(name string, serial int64, usage x509.ExtKeyUsage, sans ServerNames) {
		key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		tmpl := &x509.Certificate{SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: name},
			NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
			DNSNames: sans.DNS, IPAddresses: sans.IPs, ExtKeyUsage: []x509.ExtKeyUsage{usage},
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
	leaf("client", 3, x509.ExtKeyUsageClientAuth, IPOnly)
	return p
}

func pemBlock(typ string, der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der})
}

func (p PKI) write(t TB, name string, b []byte) {
	if err := os.WriteFile(p.Path(name), b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// StartTLS starts a standalone server whose secureClientPort, on 127.0.0.1,
// presents p's server certificate and demands a client certificate, with
// extra zoo.cfg entries. It returns the port; the server stops when the
// test ends.
func StartTLS(ctx context.Context, t TB, p PKI, extra map[string]string) string {
	t.Helper()
	NeedServer(t)
	ports, err := freePorts(1)
	if err != nil {
		t.Fatal(err)
	}
	port := strconv.Itoa(ports[0])
	cfg := map[string]string{
		"serverCnxnFactory":               "org.apache.zookeeper.server.NettyServerCnxnFactory",
		"secureClientPort":                port,
		"secureClientPortAddress":         "127.0.0.1",
		"ssl.keyStore.location":           p.Path("server.pem"),
		"ssl.keyStore.type":               "PEM",
		"ssl.trustStore.location":         p.Path("ca.pem"),
		"ssl.trustStore.type":             "PEM",
		"ssl.clientAuth":                  "need",
		"ssl.hostnameVerification":        "false",
		"ssl.quorum.hostnameVerification": "false",
	}
	for k, v := range extra {
		cfg[k] = v
	}
	srv, err := StartStandalone(ctx, Options{ExtraConfig: cfg})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Stop() })
	return port
}
