package zkconn

import (
	"crypto/x509"
	"encoding/asn1"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/go-zookeeper/zk"
)

// SchemeX509 is the --auth value that names the TLS client certificate as
// the client's identity: ZooKeeper's X509AuthenticationProvider gives
// every connection with a trusted client certificate the id
// x509:<subject DN>, with no addAuth call.
const SchemeX509 = "x509"

// x509ACL is the ACL of the nodes a client authenticated by its
// certificate creates: everything for its own subject, read for everyone
// (as Auth.ACL for digest).
func x509ACL(tlsCert [][]byte) ([]zk.ACL, error) {
	if len(tlsCert) == 0 {
		return nil, fmt.Errorf("%w: x509 auth needs a TLS client certificate", ErrBadAuth)
	}
	cert, err := x509.ParseCertificate(tlsCert[0])
	if err != nil {
		return nil, fmt.Errorf("%w: client certificate: %v", ErrBadAuth, err)
	}
	dn, err := x509SubjectDN(cert.RawSubject)
	if err != nil {
		return nil, fmt.Errorf("%w: client certificate subject: %v", ErrBadAuth, err)
	}
	return []zk.ACL{
		{Perms: zk.PermAll, Scheme: SchemeX509, ID: dn},
		{Perms: zk.PermRead, Scheme: "world", ID: "anyone"},
	}, nil
}

// The subject DN as the server's X509AuthenticationProvider.getClientId
// writes it: X500Principal.getName(), RFC 2253. That means the RDNs in
// reverse order, joined by ','; a multi-valued RDN's parts joined by '+';
// the keywords CN, C, L, ST, O, OU, STREET, DC and UID, any other type as
// its dotted OID with the value's DER in hex after '#'; string values
// escaped with '\'. Go's pkix.Name.String differs (other keywords, other
// escapes), and an ACL that is off by one character locks its owner out.

// rawRDNSET is one relative distinguished name; encoding/asn1 reads a
// type whose name ends in SET as an ASN.1 SET.
type rawRDNSET []rawATV

type rawATV struct {
	Type  asn1.ObjectIdentifier
	Value asn1.RawValue
}

var rfc2253Keywords = map[string]string{
	"2.5.4.3": "CN", "2.5.4.6": "C", "2.5.4.7": "L", "2.5.4.8": "ST", "2.5.4.10": "O",
	"2.5.4.11": "OU", "2.5.4.9": "STREET", "0.9.2342.19200300.100.1.25": "DC",
	"0.9.2342.19200300.100.1.1": "UID",
}

func x509SubjectDN(raw []byte) (string, error) {
	var seq []rawRDNSET
	if rest, err := asn1.Unmarshal(raw, &seq); err != nil {
		return "", err
	} else if len(rest) > 0 {
		return "", errors.New("trailing data after the subject")
	}
	rdns := make([]string, 0, len(seq))
	for i := len(seq) - 1; i >= 0; i-- {
		avas := make([]string, 0, len(seq[i]))
		for _, a := range seq[i] {
			avas = append(avas, rfc2253AVA(a))
		}
		rdns = append(rdns, strings.Join(avas, "+"))
	}
	return strings.Join(rdns, ","), nil
}

func rfc2253AVA(a rawATV) string {
	oid := a.Type.String()
	if key, ok := rfc2253Keywords[oid]; ok {
		if s, ok := directoryString(a.Value); ok {
			return key + "=" + rfc2253Escape(s)
		}
		oid = key
	}
	return oid + "=#" + hex.EncodeToString(a.Value.FullBytes)
}

// directoryString decodes the string types a DN value may have.
func directoryString(v asn1.RawValue) (string, bool) {
	if v.Class != asn1.ClassUniversal {
		return "", false
	}
	switch v.Tag {
	case asn1.TagUTF8String, asn1.TagPrintableString, asn1.TagIA5String:
		if utf8.Valid(v.Bytes) {
			return string(v.Bytes), true
		}
	case asn1.TagT61String: // read as ISO 8859-1, as Java does
		r := make([]rune, len(v.Bytes))
		for i, b := range v.Bytes {
			r[i] = rune(b)
		}
		return string(r), true
	case asn1.TagBMPString:
		if len(v.Bytes)%2 != 0 {
			return "", false
		}
		r := make([]rune, 0, len(v.Bytes)/2)
		for i := 0; i < len(v.Bytes); i += 2 {
			r = append(r, rune(v.Bytes[i])<<8|rune(v.Bytes[i+1]))
		}
		return string(r), true
	}
	return "", false
}

// rfc2253Escape escapes a value as X500Principal.getName does: a
// backslash before , + " \ < > ; and before a leading '#' or space or a
// trailing space.
func rfc2253Escape(s string) string {
	var b strings.Builder
	for i, r := range s {
		switch {
		case strings.ContainsRune(`,+"\<>;`, r),
			i == 0 && (r == '#' || r == ' '),
			i == len(s)-1 && r == ' ':
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}
