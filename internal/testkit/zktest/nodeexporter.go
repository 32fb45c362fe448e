package zktest

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// nodeExporterBin is Debian's prometheus-node-exporter, which
// scripts/install-deps.sh installs.
const nodeExporterBin = "prometheus-node-exporter"

// NodeExporter is a real node_exporter on loopback, with its textfile
// collector reading one directory and every other collector off.
type NodeExporter struct {
	Addr string // host:port of its web server
}

// StartNodeExporter starts node_exporter reading dir, on a free port of
// its own, and returns once it serves /metrics. It is stopped with the
// test.
func StartNodeExporter(tb TB, dir string) *NodeExporter {
	tb.Helper()
	bin, err := exec.LookPath(nodeExporterBin)
	if err != nil {
		tb.Fatalf("%s is missing (scripts/install-deps.sh installs it): %v", nodeExporterBin, err)
	}
	var last string
	// A port found free may be taken before node_exporter binds it by
	// another test binary: try a few.
	for range 5 {
		ports, err := freePorts(1)
		if err != nil {
			tb.Fatal(err)
		}
		addr := "127.0.0.1:" + strconv.Itoa(ports[0])
		cmd := exec.Command(bin, "--web.listen-address="+addr, "--collector.disable-defaults", "--collector.textfile",
			"--collector.textfile.directory="+dir, "--web.disable-exporter-metrics", "--log.level=warn")
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := startCmd(cmd); err != nil {
			tb.Fatalf("start %s: %v", nodeExporterBin, err)
		}
		exited := make(chan struct{})
		go func() {
			cmd.Wait()
			close(exited)
		}()
		e := &NodeExporter{Addr: addr}
		deadline := time.Now().Add(10 * time.Second)
		for time.Now().Before(deadline) {
			if _, err := e.Scrape(context.Background()); err == nil {
				tb.Cleanup(func() {
					cmd.Process.Kill()
					<-exited
				})
				return e
			}
			select {
			case <-exited:
				deadline = time.Time{} // it failed to start: another port
			case <-time.After(20 * time.Millisecond):
			}
		}
		cmd.Process.Kill()
		<-exited
		last = out.String()
	}
	tb.Fatalf("%s did not start: %s", nodeExporterBin, last)
	return nil
}

// Scrape fetches its /metrics page.
func (e *NodeExporter) Scrape(ctx context.Context) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+e.Addr+"/metrics", nil)
	if err != nil {
		return "", err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("GET /metrics: %s: %s", resp.Status, body)
	}
	return string(body), nil
}

// Sample is the value of the series whose line, without the value, is
// series (e.g. `name{a="b"}`), as node_exporter serves it; ok is false
// when it serves none.
func Sample(page, series string) (float64, bool) {
	for _, line := range strings.Split(page, "\n") {
		if rest, ok := strings.CutPrefix(line, series+" "); ok {
			v, err := strconv.ParseFloat(strings.Fields(rest)[0], 64)
			return v, err == nil
		}
	}
	return 0, false
}
