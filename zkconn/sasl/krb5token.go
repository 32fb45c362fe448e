package sasl

import (
	"encoding/binary"

	"github.com/jcmturner/gofork/encoding/asn1"
	"github.com/jcmturner/gokrb5/v8/asn1tools"
	"github.com/jcmturner/gokrb5/v8/client"
	"github.com/jcmturner/gokrb5/v8/gssapi"
	"github.com/jcmturner/gokrb5/v8/iana/chksumtype"
	"github.com/jcmturner/gokrb5/v8/messages"
	"github.com/jcmturner/gokrb5/v8/types"
)

// The GSS-API initial context token of the Kerberos mechanism, built here
// rather than with gokrb5's spnego package: that package serves HTTP's
// Negotiate too, and linking it links net/http, whose package
// initialisation every zklock process (and every start of one) would pay
// for.

// krb5TokIDAPReq is the token ID of an AP-REQ (RFC 4121 §4.1).
var krb5TokIDAPReq = []byte{0x01, 0x00}

// apReqToken is the initial context token that carries an AP-REQ for tkt,
// authenticated with the ticket's session key, asking for flags (RFC 2743
// §3.1: [APPLICATION 0] { the mechanism's OID, the token ID, the AP-REQ }).
func apReqToken(cl *client.Client, tkt messages.Ticket, key types.EncryptionKey, flags uint32) ([]byte, error) {
	auth, err := types.NewAuthenticator(cl.Credentials.Domain(), cl.Credentials.CName())
	if err != nil {
		return nil, err
	}
	auth.Cksum = types.Checksum{CksumType: chksumtype.GSSAPI, Checksum: gssChecksum(flags)}
	req, err := messages.NewAPReq(tkt, key, auth)
	if err != nil {
		return nil, err
	}
	ap, err := req.Marshal()
	if err != nil {
		return nil, err
	}
	b, err := asn1.Marshal(gssapi.OIDKRB5.OID())
	if err != nil {
		return nil, err
	}
	b = append(b, krb5TokIDAPReq...)
	b = append(b, ap...)
	return asn1tools.AddASNAppTag(b, 0), nil
}

// gssChecksum is the authenticator's checksum of RFC 4121 §4.1.1, all
// little-endian: the length of the channel bindings' hash (16), that hash
// (zeros: no channel bindings), and the context flags. Without
// delegation it ends there.
func gssChecksum(flags uint32) []byte {
	c := make([]byte, 24)
	binary.LittleEndian.PutUint32(c[0:4], 16)
	binary.LittleEndian.PutUint32(c[20:24], flags)
	return c
}
