package sasl

import (
	"crypto/md5"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"github.com/zklock/zklock/zkconn"
)

// The SASL DIGEST-MD5 client (RFC 2831), as ZooKeeper's DigestLoginModule
// servers speak it: the client opens with an empty token, the server sends a
// challenge, the client answers with a digest of the password, and the
// server proves it knows the password too (rspauth). Only qop=auth is
// offered: the traffic after the exchange is not protected by SASL (use TLS
// for that), exactly as with ZooKeeper's own Java client.

// ZooKeeper's Java client and server both name the service this way for
// DIGEST-MD5: protocol "zookeeper", server name "zk-sasl-md5", whatever
// host the client connected to.
const (
	digestProtocol   = "zookeeper"
	digestServerName = "zk-sasl-md5"
)

// digestMD5 is one DIGEST-MD5 exchange.
type digestMD5 struct {
	user, password string
	digestURI      string
	// cnonce is the client's nonce; tests fix it, otherwise it is random.
	cnonce string
	step   int
	// rspauth is the server's proof the client expects in the last step.
	rspauth string
}

func newDigestMD5(user, password string) *digestMD5 {
	return &digestMD5{user: user, password: password, digestURI: digestProtocol + "/" + digestServerName}
}

func (d *digestMD5) Start() ([]byte, error) {
	d.step = 1
	// DIGEST-MD5 has no initial response: the server speaks first.
	return []byte{}, nil
}

// next answers the server's challenge; after the server's final token it
// returns done.
func (d *digestMD5) Next(challenge []byte) (resp []byte, done bool, err error) {
	switch d.step {
	case 1:
		d.step = 2
		resp, err := d.respond(challenge)
		return resp, false, err
	case 2:
		d.step = 3
		fields, err := parseDigestFields(string(challenge))
		if err != nil {
			return nil, false, err
		}
		got := fields["rspauth"]
		if subtle.ConstantTimeCompare([]byte(got), []byte(d.rspauth)) != 1 {
			return nil, false, errors.New("the server's rspauth does not match: it does not know the password")
		}
		return nil, true, nil
	}
	return nil, false, errors.New("unexpected DIGEST-MD5 challenge after the exchange ended")
}

// respond builds the digest-response to a digest-challenge.
func (d *digestMD5) respond(challenge []byte) ([]byte, error) {
	fields, err := parseDigestFields(string(challenge))
	if err != nil {
		return nil, err
	}
	nonce := fields["nonce"]
	if nonce == "" {
		return nil, errors.New("DIGEST-MD5 challenge without a nonce")
	}
	if alg := fields["algorithm"]; alg != "md5-sess" {
		return nil, fmt.Errorf("DIGEST-MD5 challenge with algorithm %q, want md5-sess", alg)
	}
	if q, ok := fields["qop"]; ok && !listHas(q, "auth") {
		return nil, fmt.Errorf("the server offers qop %q, and zklock speaks only auth", q)
	}
	// The first realm the server offers, as the Java client picks by
	// default; ZooKeeper's servers offer one.
	realm, _, _ := strings.Cut(fields["realm"], ",")
	if d.cnonce == "" {
		b := make([]byte, 24)
		if _, err := rand.Read(b); err != nil {
			return nil, err
		}
		d.cnonce = base64.RawStdEncoding.EncodeToString(b)
	}
	// Without charset=utf-8 the strings would be ISO 8859-1; ZooKeeper's
	// servers always send it, and for ASCII names both agree.
	const nc = "00000001"
	d.rspauth = digestResponse(d.user, realm, d.password, nonce, d.cnonce, nc, "", d.digestURI)
	resp := digestResponse(d.user, realm, d.password, nonce, d.cnonce, nc, "AUTHENTICATE", d.digestURI)
	var b strings.Builder
	fmt.Fprintf(&b, "charset=utf-8,username=%s,realm=%s,nonce=%s,nc=%s,cnonce=%s,digest-uri=%s,maxbuf=65536,response=%s,qop=auth",
		quoteDigest(d.user), quoteDigest(realm), quoteDigest(nonce), nc, quoteDigest(d.cnonce), quoteDigest(d.digestURI), resp)
	return []byte(b.String()), nil
}

// digestResponse is RFC 2831's response-value (method "AUTHENTICATE") or
// rspauth (method "") for qop=auth and algorithm md5-sess.
func digestResponse(user, realm, password, nonce, cnonce, nc, method, uri string) string {
	h := md5.Sum([]byte(user + ":" + realm + ":" + password))
	a1 := string(h[:]) + ":" + nonce + ":" + cnonce
	ha1 := md5hex(a1)
	ha2 := md5hex(method + ":" + uri)
	return md5hex(ha1 + ":" + nonce + ":" + nc + ":" + cnonce + ":auth:" + ha2)
}

func md5hex(s string) string {
	h := md5.Sum([]byte(s))
	return hex.EncodeToString(h[:])
}

func quoteDigest(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}

func listHas(list, item string) bool {
	for _, v := range strings.Split(list, ",") {
		if strings.TrimSpace(v) == item {
			return true
		}
	}
	return false
}

// parseDigestFields parses a comma-separated list of key=value pairs, each
// value a token or a quoted string (RFC 2831 section 7.1). A key given more
// than once (realm may be) keeps every value, joined by commas.
func parseDigestFields(s string) (map[string]string, error) {
	fields := map[string]string{}
	for {
		s = strings.TrimLeft(s, " \t\r\n,")
		if s == "" {
			return fields, nil
		}
		eq := strings.IndexByte(s, '=')
		if eq <= 0 {
			return nil, fmt.Errorf("malformed DIGEST-MD5 token near %q", s)
		}
		key := strings.ToLower(strings.TrimSpace(s[:eq]))
		s = strings.TrimLeft(s[eq+1:], " \t")
		var val strings.Builder
		if strings.HasPrefix(s, `"`) {
			i := 1
			for ; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) {
					i++
				}
				val.WriteByte(s[i])
			}
			if i >= len(s) {
				return nil, fmt.Errorf("unterminated quoted string in DIGEST-MD5 token after %s=", key)
			}
			s = s[i+1:]
		} else {
			end := strings.IndexByte(s, ',')
			if end < 0 {
				end = len(s)
			}
			val.WriteString(strings.TrimSpace(s[:end]))
			s = s[end:]
		}
		if old, ok := fields[key]; ok {
			fields[key] = old + "," + val.String()
		} else {
			fields[key] = val.String()
		}
	}
}

// DigestLogin logs in with SASL DIGEST-MD5, as a user of the server's
// DigestLoginModule (its user_<name>=<password> options).
type DigestLogin struct {
	Username string
	Password string
}

// Mechanism is "DIGEST-MD5".
func (*DigestLogin) Mechanism() string { return "DIGEST-MD5" }

// Principal is the user name.
func (d *DigestLogin) Principal() string { return d.Username }

// Exchange starts a DIGEST-MD5 exchange.
func (d *DigestLogin) Exchange(string) (zkconn.SASLExchange, error) {
	return newDigestMD5(d.Username, d.Password), nil
}
