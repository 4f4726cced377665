package telemetry

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
)

// record makes one call of every method.
func record(m *Metrics) {
	m.RunStarted()
	m.RunStarted()
	m.RunEnded("completed", 3*time.Second)
	m.Turn()
	m.Turn()
	m.ToolExecuted("bash", "ok", 20*time.Millisecond)
	m.ToolExecuted("bash", "error", 5*time.Millisecond)
	m.ToolExecuted("read_file", "invalid", time.Millisecond)
	m.ToolExecuted("write_file", "denied", 0)
	m.PermissionDecision("deny", "policy")
	m.PermissionDecision("allow", "user")
	m.Compaction("budget")
	m.ModelCall("anthropic", "claude-sonnet-4-5", 2*time.Second, 1000, 200, 800, 0)
	m.QueueDepth(4)
	m.QueueAdd(-1)
	m.SSEClients(1)
	m.SSEClients(1)
	m.SSEClients(-1)
	m.HTTPRequest("POST", "/sessions/{id}/messages", 202, 10*time.Millisecond)
	m.ToolExecuted("bad\xffname", "ok", 0)
}

func TestMetricsExposition(t *testing.T) {
	m := NewMetrics()
	record(m)
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("GET /metrics: %d", rec.Code)
	}
	body := rec.Body.String()
	for _, family := range []string{
		"rein_runs_started_total", "rein_runs_active", "rein_runs_total", "rein_run_seconds", "rein_turns_total",
		"rein_tool_executions_total", "rein_tool_errors_total", "rein_tool_seconds", "rein_permission_decisions_total",
		"rein_compactions_total", "rein_model_call_seconds", "rein_model_tokens_total", "rein_queue_depth",
		"rein_sse_clients", "rein_http_requests_total", "rein_http_request_seconds", "go_goroutines", "process_cpu_seconds_total",
	} {
		if !strings.Contains(body, "# TYPE "+family+" ") {
			t.Errorf("exposition has no family %s", family)
		}
	}
}

func TestMetricsValues(t *testing.T) {
	m := NewMetrics()
	record(m)
	const want = `
# HELP rein_permission_decisions_total Permission decisions, by decision (allow, deny) and by whom (policy, user, hook, timeout).
# TYPE rein_permission_decisions_total counter
rein_permission_decisions_total{by="policy",decision="deny"} 1
rein_permission_decisions_total{by="user",decision="allow"} 1
# HELP rein_queue_depth Runs waiting in the queue.
# TYPE rein_queue_depth gauge
rein_queue_depth 3
# HELP rein_runs_active Runs begun and not yet ended.
# TYPE rein_runs_active gauge
rein_runs_active 1
# HELP rein_sse_clients Open server-sent event streams.
# TYPE rein_sse_clients gauge
rein_sse_clients 1
# HELP rein_tool_errors_total Tool calls that failed (outcome error, invalid or unknown_tool).
# TYPE rein_tool_errors_total counter
rein_tool_errors_total{tool="bash"} 1
rein_tool_errors_total{tool="read_file"} 1
# HELP rein_model_tokens_total Tokens of model calls, by kind (input, output, cache_read, cache_write).
# TYPE rein_model_tokens_total counter
rein_model_tokens_total{kind="cache_read",model="claude-sonnet-4-5",provider="anthropic"} 800
rein_model_tokens_total{kind="input",model="claude-sonnet-4-5",provider="anthropic"} 1000
rein_model_tokens_total{kind="output",model="claude-sonnet-4-5",provider="anthropic"} 200
# HELP rein_http_requests_total HTTP requests served, by method, route pattern and status.
# TYPE rein_http_requests_total counter
rein_http_requests_total{method="POST",route="/sessions/{id}/messages",status="202"} 1
`
	if err := testutil.GatherAndCompare(m.Registry(), strings.NewReader(want),
		"rein_permission_decisions_total", "rein_queue_depth", "rein_runs_active", "rein_sse_clients",
		"rein_tool_errors_total", "rein_model_tokens_total", "rein_http_requests_total"); err != nil {
		t.Error(err)
	}
	if n := testutil.ToFloat64(m.toolExec.WithLabelValues("bad\uFFFDname", "ok")); n != 1 {
		t.Errorf("invalid UTF-8 tool name: %v calls recorded under the repaired name, want 1", n)
	}
	if n := testutil.CollectAndCount(m.runSeconds); n != 1 {
		t.Errorf("rein_run_seconds: %d series, want 1", n)
	}
}

func TestNilMetrics(t *testing.T) {
	var m *Metrics
	record(m) // must not panic
	if m.Registry() != nil {
		t.Error("nil Metrics has a registry")
	}
	srv := httptest.NewServer(m.Handler())
	defer srv.Close()
	resp, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("nil Metrics handler: %d, want 404", resp.StatusCode)
	}
}
