package recipe

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestMayMention: whenever decoding a record could find the key, the scan
// says it may, and it says no only for data that cannot hold it.
func TestMayMention(t *testing.T) {
	type rec struct {
		Revoke *struct{} `json:"revoke"`
	}
	decodes := func(data string) bool {
		var r rec
		return json.Unmarshal([]byte(data), &r) == nil && r.Revoke != nil
	}
	for _, data := range []string{
		`{"revoke":{}}`, `{"REVOKE":{}}`, `{"ReVoKe":{}}`, `{"revo\u212ae":{}}`, "{\"revo\u212ae\":{}}",
		`{"\u0072evoke":{}}`, `{"zklock":"1","cmd":["revoke"]}`, `{"zklock":"1"}`, `{}`, ``, `10.0.0.1`,
		`{"zklock":"1","host":"h","cmd":["sleep","1"],"since":"2026-11-25T10:00:00Z"}`,
	} {
		may := mayMention([]byte(data), "revoke")
		if decodes(data) && !may {
			t.Errorf("%s: decodes to a revocation, but mayMention says no", data)
		}
		if strings.Contains(data, "revoke") && !may {
			t.Errorf("%s: holds the word, but mayMention says no", data)
		}
	}
	for _, data := range []string{`{"zklock":"1"}`, `10.0.0.1`, `{"cmd":["echo","revok"]}`} {
		if mayMention([]byte(data), "revoke") {
			t.Errorf("%s: mayMention says yes", data)
		}
	}
}
