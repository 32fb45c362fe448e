package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestExporterUnit: the exporter's unit that the packages ship
// (packaging/zklock-exporter.service, named in .goreleaser.yaml) is one
// systemd accepts, runs zklock exporter, and is not enabled by the
// package: nothing in the package runs systemctl.
func TestExporterUnit(t *testing.T) {
	b, err := os.ReadFile("../packaging/zklock-exporter.service")
	if err != nil {
		t.Fatal(err)
	}
	unit := string(b)
	if !strings.Contains(unit, "\nExecStart=/usr/bin/zklock exporter ") {
		t.Errorf("the unit does not run /usr/bin/zklock exporter:\n%s", unit)
	}
	g, err := os.ReadFile("../.goreleaser.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(g), "- src: packaging/zklock-exporter.service\n        dst: /usr/lib/systemd/system/zklock-exporter.service\n") {
		t.Errorf(".goreleaser.yaml does not ship the unit to /usr/lib/systemd/system")
	}
	if strings.Contains(string(g), "systemctl") {
		t.Errorf(".goreleaser.yaml runs systemctl: the unit must stay off until enabled")
	}
	bin, err := exec.LookPath("zklock")
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "zklock-exporter.service")
	if err := os.WriteFile(file, []byte(strings.ReplaceAll(unit, "/usr/bin/zklock", bin)), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("systemd-analyze", "verify", "--man=no", file).CombinedOutput()
	if err != nil || len(out) > 0 {
		t.Errorf("systemd-analyze verify: %v: %s", err, out)
	}
}
