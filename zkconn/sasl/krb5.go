package sasl

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/jcmturner/gokrb5/v8/client"
	"github.com/jcmturner/gokrb5/v8/credentials"
	"github.com/jcmturner/gokrb5/v8/gssapi"
	"github.com/jcmturner/gokrb5/v8/iana/keyusage"
	"github.com/jcmturner/gokrb5/v8/keytab"
	"github.com/jcmturner/gokrb5/v8/krberror"
	"github.com/jcmturner/gokrb5/v8/types"
	"github.com/zklock/zklock/internal/files"
	"github.com/zklock/zklock/zkconn"
)

// krb5Client is all the GSSAPI mechanism (gssapi.go) needs from a Kerberos
// implementation. gokrb5 is behind it, and nothing else in zklock imports
// gokrb5, so a change of library touches this file only.
type krb5Client interface {
	// context starts a security context with the service principal spn
	// ("service/host"), getting a service ticket as needed.
	context(spn string) (krb5Context, error)
}

// krb5Context is one GSS-API Kerberos security context, from the
// initiator's side (RFC 4121).
type krb5Context interface {
	// initToken is the InitialContextToken carrying the AP-REQ.
	initToken() []byte
	// unwrap verifies an acceptor's integrity-only Wrap token and returns
	// its payload.
	unwrap(tok []byte) ([]byte, error)
	// wrap builds an initiator's integrity-only Wrap token.
	wrap(payload []byte) ([]byte, error)
}

// krb5ConfigPath is the krb5.conf to read: KRB5_CONFIG (the first existing
// file of its colon-separated list, as MIT's library does) or
// /etc/krb5.conf.
func krb5ConfigPath() string {
	if v := os.Getenv("KRB5_CONFIG"); v != "" {
		for _, p := range strings.Split(v, ":") {
			if _, err := os.Stat(p); err == nil {
				return p
			}
		}
		return strings.Split(v, ":")[0]
	}
	return "/etc/krb5.conf"
}

// krb5CCachePath is the ticket cache to read: name, else KRB5CCNAME, else
// MIT's default /tmp/krb5cc_<uid>. Only file caches can be read.
func krb5CCachePath(name string) (string, error) {
	if name == "" {
		name = os.Getenv("KRB5CCNAME")
	}
	if name == "" {
		return filepath.Join(os.TempDir(), fmt.Sprintf("krb5cc_%d", os.Getuid())), nil
	}
	if typ, rest, ok := strings.Cut(name, ":"); ok && !strings.Contains(typ, "/") {
		if typ != "FILE" {
			return "", fmt.Errorf("ticket cache %s: only FILE: caches can be read", name)
		}
		name = rest
	}
	return name, nil
}

// gokrb5Client is a krb5Client on github.com/jcmturner/gokrb5.
type gokrb5Client struct{ cl *client.Client }

// newGokrb5Client logs in: from the keytab (an AS exchange with the KDC)
// or from the ticket cache (no KDC contact until a service ticket is
// needed). Errors are classified for the exit code: ErrNoKDC when no KDC
// answered, a refusal when the KDC or the cache says no.
func newGokrb5Client(l *KerberosLogin) (*gokrb5Client, error) {
	cfg, err := readKrb5Conf(krb5ConfigPath())
	if err != nil {
		return nil, err
	}
	if l.Keytab != "" {
		b, err := files.Keytab.Read(l.Keytab)
		if err != nil {
			return nil, err
		}
		kt := keytab.New()
		if err := kt.Unmarshal(b); err != nil {
			return nil, fmt.Errorf("keytab %s: %v", l.Keytab, err)
		}
		user, realm, ok := strings.Cut(l.Client, "@")
		if !ok {
			realm = cfg.LibDefaults.DefaultRealm
		}
		cl := client.NewWithKeytab(user, realm, kt, cfg, client.DisablePAFXFAST(true))
		if err := cl.Login(); err != nil {
			return nil, classifyKrb5(err)
		}
		return &gokrb5Client{cl}, nil
	}
	path, err := krb5CCachePath(l.CCache)
	if err != nil {
		return nil, err
	}
	cc, err := readCCache(path)
	var refused *files.Error
	if errors.As(err, &refused) && errors.Unwrap(refused) == nil {
		return nil, err // not a regular file, too large, or not private
	}
	if err != nil {
		return nil, zkconn.SASLRefused("no usable ticket cache %s (run kinit): %v", path, err)
	}
	if l.Client != "" {
		want := l.Client
		got := cc.DefaultPrincipal.PrincipalName.PrincipalNameString() + "@" + cc.DefaultPrincipal.Realm
		if !strings.Contains(want, "@") {
			got, _, _ = strings.Cut(got, "@")
		}
		if got != want {
			return nil, zkconn.SASLRefused("the ticket cache %s holds tickets for %s, not %s", path, got, want)
		}
	}
	cl, err := client.NewFromCCache(cc, cfg, client.DisablePAFXFAST(true))
	if err != nil {
		return nil, zkconn.SASLRefused("ticket cache %s: %v (run kinit)", path, err)
	}
	for _, c := range cc.GetEntries() {
		if len(c.Server.PrincipalName.NameString) > 0 && c.Server.PrincipalName.NameString[0] == "krbtgt" && time.Now().After(c.EndTime) {
			return nil, zkconn.SASLRefused("the ticket cache %s expired at %s (run kinit)", path, c.EndTime.Local().Format(time.DateTime))
		}
	}
	return &gokrb5Client{cl}, nil
}

// principalOf names the client of a login: as configured, or from the
// ticket cache.
func ccachePrincipal(name string) string {
	path, err := krb5CCachePath(name)
	if err != nil {
		return ""
	}
	cc, err := readCCache(path)
	if err != nil {
		return ""
	}
	return cc.DefaultPrincipal.PrincipalName.PrincipalNameString() + "@" + cc.DefaultPrincipal.Realm
}

// readCCache reads a ticket cache file, bounded (files.TicketCache).
func readCCache(path string) (*credentials.CCache, error) {
	b, err := files.TicketCache.Read(path)
	if err != nil {
		return nil, err
	}
	cc := new(credentials.CCache)
	if err := cc.Unmarshal(b); err != nil {
		return nil, err
	}
	return cc, nil
}

// classifyKrb5 maps gokrb5's errors, which keep no error chain, onto
// zklock's classes by their root cause.
func classifyKrb5(err error) error {
	var ke krberror.Krberror
	if !errors.As(err, &ke) {
		return err
	}
	switch ke.RootCause {
	case krberror.NetworkingError:
		text := lastKrb5Text(ke)
		if i := strings.LastIndex(text, "dial "); i >= 0 {
			text = text[i:] // the socket's own error says it best
		}
		return fmt.Errorf("%w: %s", ErrNoKDC, text)
	case krberror.DecryptingError:
		// The KDC's answer is encrypted with the client's key: the
		// keytab's key is not the KDC's (changed since, or wrong).
		return zkconn.SASLRefused("the client's key does not match the KDC's (changed since the keytab was made, or another principal's)")
	case krberror.KDCError, krberror.ChksumError:
		// The KDC said no (unknown principal, wrong key, expired key or
		// password), or its answer could not be decrypted with our key.
		return zkconn.SASLRefused("%s", lastKrb5Text(ke))
	}
	return err
}

// lastKrb5Text is the innermost (most specific) message of a gokrb5 error.
func lastKrb5Text(ke krberror.Krberror) string {
	if len(ke.EText) == 0 {
		return ke.RootCause
	}
	return ke.EText[len(ke.EText)-1]
}

func (g *gokrb5Client) context(spn string) (krb5Context, error) {
	tkt, key, err := g.cl.GetServiceTicket(spn)
	if err != nil {
		return nil, classifyKrb5(err)
	}
	// No mutual authentication: zklock negotiates no SASL security layer
	// (see gssapi.go), so proving the server's identity here would protect
	// nothing that follows; TLS is the way to authenticate the server.
	b, err := apReqToken(g.cl, tkt, key, gssapi.ContextFlagInteg|gssapi.ContextFlagConf)
	if err != nil {
		return nil, err
	}
	return &gokrb5Context{token: b, key: key}, nil
}

// gokrb5Context holds the session key of the service ticket: the AP-REQ
// carries no subkey and asks for no AP-REP, so both sides wrap with it.
type gokrb5Context struct {
	token []byte
	key   types.EncryptionKey
}

func (c *gokrb5Context) initToken() []byte { return c.token }

func (c *gokrb5Context) unwrap(tok []byte) ([]byte, error) {
	var wt gssapi.WrapToken
	if err := wt.Unmarshal(tok, true); err != nil {
		return nil, err
	}
	if ok, err := wt.Verify(c.key, keyusage.GSSAPI_ACCEPTOR_SEAL); !ok {
		return nil, fmt.Errorf("the server's token fails its checksum: %v", err)
	}
	return wt.Payload, nil
}

func (c *gokrb5Context) wrap(payload []byte) ([]byte, error) {
	wt, err := gssapi.NewInitiatorWrapToken(payload, c.key)
	if err != nil {
		return nil, err
	}
	return wt.Marshal()
}
