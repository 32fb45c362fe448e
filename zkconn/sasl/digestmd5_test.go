package sasl

import (
	"strings"
	"testing"
)

// TestDigestMD5RFCExample replays the example exchange of RFC 2831
// section 4 (with the digest-uri and nonces of the RFC): the response and
// the rspauth the client computes are the RFC's.
func TestDigestMD5RFCExample(t *testing.T) {
	d := newDigestMD5("chris", "secret")
	d.digestURI = "imap/elwood.innosoft.com"
	d.cnonce = "OA6MHXh6VqTrRk"
	if tok, err := d.Start(); err != nil || len(tok) != 0 {
		t.Fatalf("start = %q, %v", tok, err)
	}
	challenge := `realm="elwood.innosoft.com",nonce="OA6MG9tEQGm2hh",qop="auth",algorithm=md5-sess,charset=utf-8`
	resp, done, err := d.Next([]byte(challenge))
	if err != nil || done {
		t.Fatalf("next(challenge) = %q, %v, %v", resp, done, err)
	}
	fields, err := parseDigestFields(string(resp))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"username": "chris", "realm": "elwood.innosoft.com", "nonce": "OA6MG9tEQGm2hh",
		"cnonce": "OA6MHXh6VqTrRk", "nc": "00000001", "qop": "auth",
		"digest-uri": "imap/elwood.innosoft.com", "response": "d388dad90d4bbd760a152321f2143af7",
		"charset": "utf-8",
	}
	for k, v := range want {
		if fields[k] != v {
			t.Errorf("response %s = %q, want %q (response %q)", k, fields[k], v, resp)
		}
	}
	if _, done, err := d.Next([]byte("rspauth=ea40f60335c427b5527b84dbabcdfffd")); err != nil || !done {
		t.Errorf("the RFC's rspauth: done %v, err %v", done, err)
	}
}

func TestDigestMD5WrongRspauth(t *testing.T) {
	d := newDigestMD5("chris", "secret")
	d.Start()
	if _, _, err := d.Next([]byte(`realm="r",nonce="n",qop="auth",algorithm=md5-sess`)); err != nil {
		t.Fatal(err)
	}
	if _, done, err := d.Next([]byte("rspauth=00000000000000000000000000000000")); err == nil || done {
		t.Errorf("a wrong rspauth: done %v, err %v", done, err)
	}
}

func TestParseDigestFields(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want map[string]string
	}{
		{`a=b`, map[string]string{"a": "b"}},
		{` realm="x" , realm="y",nonce="q\"u,o"`, map[string]string{"realm": "x,y", "nonce": `q"u,o`}},
		{`qop="auth,auth-int",Algorithm=md5-sess`, map[string]string{"qop": "auth,auth-int", "algorithm": "md5-sess"}},
	} {
		got, err := parseDigestFields(tc.in)
		if err != nil {
			t.Errorf("%q: %v", tc.in, err)
			continue
		}
		for k, v := range tc.want {
			if got[k] != v {
				t.Errorf("%q: %s = %q, want %q", tc.in, k, got[k], v)
			}
		}
		if len(got) != len(tc.want) {
			t.Errorf("%q: got %v", tc.in, got)
		}
	}
	for _, bad := range []string{`=x`, `a="open`, `novalue`} {
		if _, err := parseDigestFields(bad); err == nil || !strings.Contains(err.Error(), "DIGEST-MD5") {
			t.Errorf("%q: err %v", bad, err)
		}
	}
}
