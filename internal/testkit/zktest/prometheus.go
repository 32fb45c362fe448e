package zktest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"
)

// prometheusBin is Debian's prometheus, which scripts/install-deps.sh
// installs.
const prometheusBin = "prometheus"

// Prometheus is a real Prometheus server on loopback scraping one target,
// with a storage directory of its own.
type Prometheus struct {
	Addr string // host:port of its web server and HTTP API
}

// StartPrometheus starts Prometheus scraping target's /metrics every
// interval, on a free port of its own, and returns once its API answers.
// It is stopped with the test.
func StartPrometheus(tb TB, dir, target string, interval time.Duration) *Prometheus {
	tb.Helper()
	bin, err := exec.LookPath(prometheusBin)
	if err != nil {
		tb.Fatalf("%s is missing (scripts/install-deps.sh installs it): %v", prometheusBin, err)
	}
	config := filepath.Join(dir, "prometheus.yml")
	conf := fmt.Sprintf("global:\n  scrape_interval: %s\n  scrape_timeout: %s\nscrape_configs:\n  - job_name: target\n    static_configs:\n      - targets: [%q]\n",
		interval, interval, target)
	if err := os.WriteFile(config, []byte(conf), 0o644); err != nil {
		tb.Fatal(err)
	}
	var last string
	// A port found free may be taken before Prometheus binds it by
	// another test binary: try a few.
	for i := range 5 {
		ports, err := freePorts(1)
		if err != nil {
			tb.Fatal(err)
		}
		addr := "127.0.0.1:" + strconv.Itoa(ports[0])
		cmd := exec.Command(bin, "--config.file="+config, "--web.listen-address="+addr,
			"--storage.tsdb.path="+filepath.Join(dir, "data"+strconv.Itoa(i)), "--log.level=warn")
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := startCmd(cmd); err != nil {
			tb.Fatalf("start %s: %v", prometheusBin, err)
		}
		exited := make(chan struct{})
		go func() {
			cmd.Wait()
			close(exited)
		}()
		p := &Prometheus{Addr: addr}
		deadline := time.Now().Add(60 * time.Second)
		for time.Now().Before(deadline) {
			if _, err := p.Query(context.Background(), "up"); err == nil {
				tb.Cleanup(func() {
					cmd.Process.Kill()
					<-exited
				})
				return p
			}
			select {
			case <-exited:
				deadline = time.Time{} // it failed to start: another port
			case <-time.After(50 * time.Millisecond):
			}
		}
		cmd.Process.Kill()
		<-exited
		last = out.String()
	}
	tb.Fatalf("%s did not start: %s", prometheusBin, last)
	return nil
}

// Query evaluates an instant query through the HTTP API (/api/v1/query)
// and returns each series' value, by its labels as JSON; a query whose
// answer is not a vector is an error.
func (p *Prometheus) Query(ctx context.Context, query string) (map[string]float64, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	u := "http://" + p.Addr + "/api/v1/query?" + url.Values{"query": {query}}.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("query %q: %s: %s", query, resp.Status, body)
	}
	var r struct {
		Status string
		Data   struct {
			ResultType string
			Result     []struct {
				Metric map[string]string
				Value  [2]any
			}
		}
	}
	if err := json.Unmarshal(body, &r); err != nil {
		return nil, err
	}
	if r.Status != "success" || r.Data.ResultType != "vector" {
		return nil, fmt.Errorf("query %q: %s", query, body)
	}
	out := map[string]float64{}
	for _, s := range r.Data.Result {
		k, _ := json.Marshal(s.Metric)
		str, _ := s.Value[1].(string)
		v, err := strconv.ParseFloat(str, 64)
		if err != nil {
			return nil, fmt.Errorf("query %q: value %v", query, s.Value[1])
		}
		out[string(k)] = v
	}
	return out, nil
}
