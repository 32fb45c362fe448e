package exporter

import (
	"os/exec"
	"testing"
)

// TestAlertingRules runs promtool's unit tests of the alerting rules that
// docs/guide/metrics.md shows (docs/guide/zklock-rules.yml): a lock held
// too long, a queue growing and the exporter down each fire, and only
// when they should. promtool is Debian's prometheus package's.
func TestAlertingRules(t *testing.T) {
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		t.Fatalf("promtool is missing (scripts/install-deps.sh installs the prometheus package): %v", err)
	}
	cmd := exec.Command(promtool, "test", "rules", "rules_test.yml")
	cmd.Dir = "testdata"
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("promtool test rules: %v\n%s", err, out)
	}
	cmd = exec.Command(promtool, "check", "rules", "../../../docs/guide/zklock-rules.yml")
	cmd.Dir = "testdata"
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("promtool check rules: %v\n%s", err, out)
	}
}
