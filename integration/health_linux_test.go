package integration

import (
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/multi-launcher/multi/internal/testutil"
)

// multi run --health: /readyz, /livez and /metrics, fetched with a real
// HTTP client and the metrics parsed with the Prometheus project's own
// parser: not ready until every node passed its check, ready then, not
// alive once a node is fatal (crash loop), and the metrics say each.
func TestRunHealthEndpoints(t *testing.T) {
	t.Parallel()
	bin := raceBinary(t)
	dir := t.TempDir()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	// Each node waits for its die.NAME file, then exits 3.
	cmd := exec.Command(bin, "run", "w1", "w2", "--rundir="+dir, "--health="+addr, "--ready=file:"+dir+"/%n.ok",
		"--on-exit=restart", "--backoff=10ms", "--max-restarts=1", "--",
		"sh", "-c", `while [ ! -e die.$0 ]; do sleep 0.02; done; exit 3`, "%n")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GORACE=atexit_sleep_ms=0")
	var errOut strings.Builder
	cmd.Stderr = &errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
		for _, n := range []string{"w1", "w2"} {
			if pid := testutil.Holder(filepath.Join(dir, n+".pid")); pid > 1 {
				syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	})
	get := func(path string) (int, string) {
		resp, err := http.Get("http://" + addr + path)
		if err != nil {
			return 0, err.Error()
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	until := func(what, path string, code int, body string) {
		t.Helper()
		var got int
		var text string
		testutil.PollUntil(t, what, func() bool {
			got, text = get(path)
			return got == code && strings.Contains(text, body)
		})
	}
	until("/readyz to say the nodes are not ready", "/readyz", 503, "not ready: w1 w2")
	for _, n := range []string{"w1", "w2"} {
		if err := os.WriteFile(filepath.Join(dir, n+".ok"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	until("/readyz to say ready", "/readyz", 200, "every node is ready")
	// A TCP probe (a kubelet's tcpSocket) connects and sends nothing; an
	// empty line is no request either. Each is read to its end (the
	// server is done with it), and the run goes on answering.
	for _, send := range []string{"", "\r\n\r\n"} {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		c.Write([]byte(send))
		c.(*net.TCPConn).CloseWrite()
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		if b, err := io.ReadAll(c); err != nil || len(b) > 0 {
			t.Errorf("a connection that sent %q: read %q, %v; want nothing, then its end", send, b, err)
		}
		c.Close()
	}
	if code, _ := get("/livez"); code != 200 {
		t.Errorf("/livez: %d; want 200", code)
	}
	m := metrics(t, get)
	for _, want := range []struct {
		family, node string
		value        float64
	}{{"multi_node_up", "w1", 1}, {"multi_node_ready", "w2", 1}, {"multi_node_fatal", "w2", 0}, {"multi_run_ready", "", 1}} {
		if got, ok := value(m, want.family, want.node); !ok || got != want.value {
			t.Errorf("%s{node=%q} = %v (%v); want %v", want.family, want.node, got, ok, want.value)
		}
	}
	if start, ok := value(m, "multi_node_start_time_seconds", "w1"); !ok || start < float64(time.Now().Add(-time.Hour).Unix()) {
		t.Errorf("multi_node_start_time_seconds{node=w1} = %v (%v)", start, ok)
	}

	// w2 exits 3, is restarted once, exits again: fatal.
	if err := os.WriteFile(filepath.Join(dir, "die.w2"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	until("/livez to say w2 is fatal", "/livez", 503, "w2 is fatal")
	if code, _ := get("/readyz"); code != 503 {
		t.Errorf("/readyz with w2 fatal: %d; want 503", code)
	}
	m = metrics(t, get)
	for _, want := range []struct {
		family, node string
		value        float64
	}{{"multi_node_fatal", "w2", 1}, {"multi_node_up", "w2", 0}, {"multi_node_up", "w1", 1}, {"multi_node_last_exit_status", "w2", 3},
		{"multi_node_restarts_total", "w2", 1}, {"multi_run_ready", "", 0}} {
		if got, ok := value(m, want.family, want.node); !ok || got != want.value {
			t.Errorf("%s{node=%q} = %v (%v); want %v", want.family, want.node, got, ok, want.value)
		}
	}
	cmd.Process.Signal(syscall.SIGTERM)
	err = cmd.Wait()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 3 {
		t.Errorf("run: %v; want exit status 3 (w2's)\n%s", err, errOut.String())
	}
}

// metrics fetches /metrics and parses it with expfmt.
func metrics(t *testing.T, get func(string) (int, string)) map[string]*dto.MetricFamily {
	t.Helper()
	code, body := get("/metrics")
	if code != 200 {
		t.Fatalf("/metrics: %d %s", code, body)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	m, err := p.TextToMetricFamilies(strings.NewReader(body))
	if err != nil {
		t.Fatalf("/metrics does not parse: %v\n%s", err, body)
	}
	return m
}

// value is the value of family's sample for node ("" for none).
func value(m map[string]*dto.MetricFamily, family, node string) (float64, bool) {
	f := m[family]
	if f == nil {
		return 0, false
	}
	for _, s := range f.GetMetric() {
		labels := ""
		for _, l := range s.GetLabel() {
			if l.GetName() == "node" {
				labels = l.GetValue()
			}
		}
		if labels != node {
			continue
		}
		switch {
		case s.Gauge != nil:
			return s.GetGauge().GetValue(), true
		case s.Counter != nil:
			return s.GetCounter().GetValue(), true
		}
	}
	return 0, false
}
