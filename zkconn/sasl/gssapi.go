package sasl

import (
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/zklock/zklock/zkconn"
)

// ErrNoKDC means no Kerberos KDC of the realm answered. It is a
// zkconn.ErrSASLUnreachable.
var ErrNoKDC = fmt.Errorf("%w: no Kerberos KDC reachable", zkconn.ErrSASLUnreachable)

// DefaultService is the service part of the server's principal,
// service/host, as in Java's zookeeper.sasl.client.username.
const DefaultService = "zookeeper"

// KerberosLogin logs in with SASL GSSAPI (Kerberos V5, RFC 4752).
type KerberosLogin struct {
	// Client is the client's principal, user[@REALM]. From a ticket cache
	// it may be empty: the cache's own principal is used.
	Client string
	// Keytab is the keytab file to log in from; empty: a ticket cache.
	Keytab string
	// CCache is the ticket cache; empty: KRB5CCNAME, or MIT's default.
	CCache string
	// Service is the service part of the server principal service/host;
	// empty: DefaultService.
	Service string

	mu sync.Mutex
	kc krb5Client // logged in by Login
}

// Mechanism is "GSSAPI".
func (*KerberosLogin) Mechanism() string { return "GSSAPI" }

// Principal is the client principal.
func (k *KerberosLogin) Principal() string {
	if k.Client == "" {
		if p := ccachePrincipal(k.CCache); p != "" {
			return p
		}
		return "(ticket cache)"
	}
	return k.Client
}

// Login gets the client's credentials before any server is contacted: an
// AS exchange from a keytab, or the TGT of a ticket cache. zkconn.Dial
// calls it first, so that a wrong key or a missing KDC is named as such and
// not as a connect timeout.
func (k *KerberosLogin) Login() error {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.kc != nil {
		return nil
	}
	kc, err := newGokrb5Client(k)
	if err != nil {
		return err
	}
	k.kc = kc
	return nil
}

// Exchange starts a GSSAPI exchange with the server at host.
func (k *KerberosLogin) Exchange(host string) (zkconn.SASLExchange, error) {
	if err := k.Login(); err != nil {
		return nil, err
	}
	service := k.Service
	if service == "" {
		service = DefaultService
	}
	// Hosts are written in principals in lower case.
	ctx, err := k.kc.context(service + "/" + strings.ToLower(host))
	if err != nil {
		return nil, err
	}
	return &gssapiMech{ctx: ctx}, nil
}

// gssapiMech is the client side of SASL GSSAPI (RFC 4752 section 3.1):
// send the AP-REQ; receive the server's wrapped offer of security layers
// and maximum buffer size; answer with a wrapped choice. zklock chooses no
// security layer, as ZooKeeper's Java client does: ZooKeeper applies SASL
// to the login only, never to the traffic after it.
type gssapiMech struct {
	ctx  krb5Context
	step int
}

// Security layers of RFC 4752's offer byte.
const gssapiNoLayer = 1

func (g *gssapiMech) Start() ([]byte, error) {
	g.step = 1
	return g.ctx.initToken(), nil
}

func (g *gssapiMech) Next(challenge []byte) ([]byte, bool, error) {
	switch g.step {
	case 1:
		if len(challenge) == 0 || challenge[0] == 0x60 {
			// An AP-REP or an empty token: the server finished its
			// side of the context; per RFC 4752 answer with an empty
			// response and wait for the offer.
			return []byte{}, false, nil
		}
		offer, err := g.ctx.unwrap(challenge)
		if err != nil {
			return nil, false, err
		}
		if len(offer) != 4 {
			return nil, false, fmt.Errorf("the server's security-layer offer has %d bytes, want 4", len(offer))
		}
		if offer[0]&gssapiNoLayer == 0 {
			return nil, false, errors.New("the server demands a SASL security layer (integrity or privacy), which zklock does not negotiate")
		}
		g.step = 2
		// The choice: no layer, a zero maximum buffer, no authorization
		// id (the server then authorizes the authenticated principal).
		resp, err := g.ctx.wrap([]byte{gssapiNoLayer, 0, 0, 0})
		return resp, false, err
	case 2:
		g.step = 3
		return nil, true, nil
	}
	return nil, false, errors.New("unexpected GSSAPI token after the exchange ended")
}
