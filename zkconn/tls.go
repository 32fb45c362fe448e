package zkconn

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"

	"github.com/zklock/zklock/internal/files"
)

// ErrBadTLS marks TLS settings that cannot be loaded.
var ErrBadTLS = errors.New("bad TLS settings")

// TLSFiles name the PEM files for a TLS connection to ZooKeeper's
// secureClientPort. All are optional: with none, the system's roots verify
// the server and no client certificate is sent.
type TLSFiles struct {
	CA   string // CA bundle that signed the servers' certificates
	Cert string // client certificate, for servers with ssl.clientAuth=need
	Key  string // its private key
}

// Config builds the tls.Config. Servers are verified against the host or IP
// address in the connect string, as any TLS client does.
func (f TLSFiles) Config() (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if f.CA != "" {
		pem, err := files.TLSCA.Read(f.CA)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrBadTLS, err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("%w: no PEM certificates in %s", ErrBadTLS, f.CA)
		}
		cfg.RootCAs = pool
	}
	if (f.Cert == "") != (f.Key == "") {
		return nil, fmt.Errorf("%w: a client certificate needs both its certificate file and its key file", ErrBadTLS)
	}
	if f.Cert != "" {
		cert, err := files.TLSCert.Read(f.Cert)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrBadTLS, err)
		}
		key, err := files.TLSKey.Read(f.Key)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrBadTLS, err)
		}
		pair, err := tls.X509KeyPair(cert, key)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrBadTLS, err)
		}
		cfg.Certificates = []tls.Certificate{pair}
	}
	return cfg, nil
}
