package lock

import (
	"strings"
	"testing"
)

// TestSuccessRecordIsNoContender: the record's name is no contender's in
// zklock's eyes, and holds none of the names by which Curator sorts its
// contenders ("lock-", "__READ__", "__WRIT__", "-lease-") or Kazoo finds its
// own ("__lock__", "__rlock__"), so both sort it by its whole name, after
// every sequence number.
func TestSuccessRecordIsNoContender(t *testing.T) {
	if c, ok := ParseContender(SuccessRecord); ok {
		t.Errorf("ParseContender(%q) = %+v, a contender", SuccessRecord, c)
	}
	for _, m := range append(markers, "lock-", "__READ__", "__WRIT__") {
		if strings.Contains(SuccessRecord, m) {
			t.Errorf("%q contains the marker %q", SuccessRecord, m)
		}
	}
	if SuccessRecord <= "9999999999" {
		t.Errorf("%q sorts before a sequence number", SuccessRecord)
	}
}
