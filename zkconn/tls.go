package zkconn

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
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
		pem, err := os.ReadFile(f.CA)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrBadTLS, err)
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
		pair, err := tls.LoadX509KeyPair(f.Cert, f.Key)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrBadTLS, err)
		}
		cfg.Certificates = []tls.Certificate{pair}
	}
	return cfg, nil
}
