package sasl

import (
	"bytes"
	"testing"

	"github.com/jcmturner/gokrb5/v8/client"
	"github.com/jcmturner/gokrb5/v8/config"
	"github.com/jcmturner/gokrb5/v8/gssapi"
	"github.com/jcmturner/gokrb5/v8/iana/chksumtype"
	"github.com/jcmturner/gokrb5/v8/iana/etypeID"
	"github.com/jcmturner/gokrb5/v8/iana/nametype"
	"github.com/jcmturner/gokrb5/v8/messages"
	"github.com/jcmturner/gokrb5/v8/spnego"
	"github.com/jcmturner/gokrb5/v8/types"
)

// TestAPReqToken: the initial context token reads back, with gokrb5's own
// reader of such tokens, as an AP-REQ for the ticket whose authenticator,
// under the session key, names the client and carries RFC 4121's checksum
// with the flags asked for. (The test may link what zklock must not.)
func TestAPReqToken(t *testing.T) {
	cl := client.NewWithPassword("alice", "EXAMPLE.COM", "secret", config.New())
	key := types.EncryptionKey{KeyType: etypeID.AES256_CTS_HMAC_SHA1_96, KeyValue: bytes.Repeat([]byte{7}, 32)}
	tkt := messages.Ticket{TktVNO: 5, Realm: "EXAMPLE.COM",
		SName:   types.NewPrincipalName(nametype.KRB_NT_SRV_INST, "zookeeper/zk1.example.com"),
		EncPart: types.EncryptedData{EType: etypeID.AES256_CTS_HMAC_SHA1_96, Cipher: []byte{1, 2, 3}}}
	b, err := apReqToken(cl, tkt, key, gssapi.ContextFlagInteg|gssapi.ContextFlagConf)
	if err != nil {
		t.Fatal(err)
	}
	var tok spnego.KRB5Token
	if err := tok.Unmarshal(b); err != nil {
		t.Fatalf("the token does not read back: %v", err)
	}
	if !tok.IsAPReq() || !tok.OID.Equal(gssapi.OIDKRB5.OID()) {
		t.Fatalf("the token is not a Kerberos AP-REQ: OID %v", tok.OID)
	}
	if got := tok.APReq.Ticket.SName.PrincipalNameString(); got != "zookeeper/zk1.example.com" {
		t.Errorf("the AP-REQ is for %s", got)
	}
	if err := tok.APReq.DecryptAuthenticator(key); err != nil {
		t.Fatalf("the authenticator does not decrypt with the session key: %v", err)
	}
	a := tok.APReq.Authenticator
	if a.CName.PrincipalNameString() != "alice" || a.CRealm != "EXAMPLE.COM" {
		t.Errorf("the authenticator names %s@%s", a.CName.PrincipalNameString(), a.CRealm)
	}
	want := []byte{16, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 48, 0, 0, 0}
	if a.Cksum.CksumType != chksumtype.GSSAPI || !bytes.Equal(a.Cksum.Checksum, want) {
		t.Errorf("the checksum is type %d, %v; want %d, %v", a.Cksum.CksumType, a.Cksum.Checksum, chksumtype.GSSAPI, want)
	}
}
