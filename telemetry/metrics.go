package telemetry

import (
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Token kinds of rein_model_tokens_total.
const (
	TokensInput      = "input"
	TokensOutput     = "output"
	TokensCacheRead  = "cache_read"
	TokensCacheWrite = "cache_write"
)

// Metrics holds rein's Prometheus metrics in a registry of its own, with
// the Go runtime and process collectors. Each method records one thing;
// all are safe for concurrent use, and on a nil *Metrics they do nothing.
//
// Labels must come from bounded sets that rein defines — tool names of the
// configured tool set, route patterns (not paths), model names from the
// configuration or registry, the outcome and reason constants — never from
// user input (a prompt, a path with ids, a header): every distinct value
// is a new time series held in memory for the process's life.
//
// The families:
//
//	rein_runs_started_total                       runs begun
//	rein_runs_active                              runs begun and not ended (gauge)
//	rein_runs_total{reason}                       runs ended, by end reason
//	rein_run_seconds                              run duration (histogram)
//	rein_turns_total                              model turns
//	rein_tool_executions_total{tool,outcome}      tool calls, by outcome
//	rein_tool_errors_total{tool}                  tool calls that failed (error, invalid, unknown_tool)
//	rein_tool_seconds{tool}                       tool call duration (histogram)
//	rein_permission_decisions_total{decision,by}  permission decisions (denials: decision="deny")
//	rein_compactions_total{trigger}               context compactions
//	rein_model_call_seconds{provider,model}       model call latency (histogram)
//	rein_model_tokens_total{provider,model,kind}  tokens: input, output, cache_read, cache_write
//	rein_queue_depth                              runs waiting in the queue (gauge)
//	rein_sse_clients                              open SSE streams (gauge)
//	rein_http_requests_total{method,route,status} HTTP requests served
//	rein_http_request_seconds{method,route}       HTTP request duration (histogram)
//	rein_llm_dropped_stream_items_total{provider,kind,type}
//	                                              stream items model adapters dropped (llm.RecordDrop), read at scrape time
type Metrics struct {
	reg *prometheus.Registry

	runsStarted   prometheus.Counter
	runsActive    prometheus.Gauge
	runs          *prometheus.CounterVec
	runSeconds    prometheus.Histogram
	turns         prometheus.Counter
	toolExec      *prometheus.CounterVec
	toolErrors    *prometheus.CounterVec
	toolSeconds   *prometheus.HistogramVec
	permissions   *prometheus.CounterVec
	compactions   *prometheus.CounterVec
	modelSeconds  *prometheus.HistogramVec
	modelTokens   *prometheus.CounterVec
	queueDepth    prometheus.Gauge
	sseClients    prometheus.Gauge
	httpRequests  *prometheus.CounterVec
	httpDurations *prometheus.HistogramVec
}

// NewMetrics returns metrics registered in a new registry, together with
// the Go runtime and process collectors.
func NewMetrics() *Metrics {
	reg := prometheus.NewRegistry()
	f := factory{reg}
	m := &Metrics{
		reg:         reg,
		runsStarted: f.counter("rein_runs_started_total", "Runs begun."),
		runsActive:  f.gauge("rein_runs_active", "Runs begun and not yet ended."),
		runs:        f.counterVec("rein_runs_total", "Runs ended, by end reason.", "reason"),
		runSeconds: f.histogram("rein_run_seconds", "Duration of a run, from start to end.",
			prometheus.ExponentialBuckets(0.5, 2, 14)), // 0.5s … ~68min
		turns: f.counter("rein_turns_total", "Model turns taken by runs."),
		toolExec: f.counterVec("rein_tool_executions_total",
			"Tool calls executed, by tool and outcome (ok, error, denied, blocked, interrupted, invalid, unknown_tool).", "tool", "outcome"),
		toolErrors: f.counterVec("rein_tool_errors_total", "Tool calls that failed (outcome error, invalid or unknown_tool).", "tool"),
		toolSeconds: f.histogramVec("rein_tool_seconds", "Duration of a tool call.",
			prometheus.ExponentialBuckets(0.005, 3, 11), "tool"), // 5ms … ~5min
		permissions: f.counterVec("rein_permission_decisions_total",
			"Permission decisions, by decision (allow, deny) and by whom (policy, user, hook, timeout).",
			"decision", "by"),
		compactions: f.counterVec("rein_compactions_total", "Context compactions, by trigger.", "trigger"),
		modelSeconds: f.histogramVec("rein_model_call_seconds", "Latency of a model call, request to last token.",
			prometheus.ExponentialBuckets(0.1, 2, 12), "provider", "model"), // 0.1s … ~3.4min
		modelTokens: f.counterVec("rein_model_tokens_total",
			"Tokens of model calls, by kind (input, output, cache_read, cache_write).", "provider", "model", "kind"),
		queueDepth: f.gauge("rein_queue_depth", "Runs waiting in the queue."),
		sseClients: f.gauge("rein_sse_clients", "Open server-sent event streams."),
		httpRequests: f.counterVec("rein_http_requests_total",
			"HTTP requests served, by method, route pattern and status.", "method", "route", "status"),
		httpDurations: f.histogramVec("rein_http_request_seconds", "Duration of an HTTP request.",
			prometheus.DefBuckets, "method", "route"),
	}
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}), dropsCollector{})
	return m
}

// factory creates collectors and registers them in one registry.
type factory struct{ reg *prometheus.Registry }

func (f factory) counter(name, help string) prometheus.Counter {
	c := prometheus.NewCounter(prometheus.CounterOpts{Name: name, Help: help})
	f.reg.MustRegister(c)
	return c
}

func (f factory) gauge(name, help string) prometheus.Gauge {
	g := prometheus.NewGauge(prometheus.GaugeOpts{Name: name, Help: help})
	f.reg.MustRegister(g)
	return g
}

func (f factory) counterVec(name, help string, labels ...string) *prometheus.CounterVec {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, labels)
	f.reg.MustRegister(c)
	return c
}

func (f factory) histogram(name, help string, buckets []float64) prometheus.Histogram {
	h := prometheus.NewHistogram(prometheus.HistogramOpts{Name: name, Help: help, Buckets: buckets})
	f.reg.MustRegister(h)
	return h
}

func (f factory) histogramVec(name, help string, buckets []float64, labels ...string) *prometheus.HistogramVec {
	h := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: name, Help: help, Buckets: buckets}, labels)
	f.reg.MustRegister(h)
	return h
}

// Registry returns the registry the metrics live in, for collectors of
// other packages. Nil for a nil *Metrics.
func (m *Metrics) Registry() *prometheus.Registry {
	if m == nil {
		return nil
	}
	return m.reg
}

// Handler serves the registry in the Prometheus exposition format (text,
// or OpenMetrics when the scraper asks for it). A nil *Metrics serves 404.
func (m *Metrics) Handler() http.Handler {
	if m == nil {
		return http.NotFoundHandler()
	}
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg, EnableOpenMetrics: true})
}

// RunStarted records that a run began.
func (m *Metrics) RunStarted() {
	if m == nil {
		return
	}
	m.runsStarted.Inc()
	m.runsActive.Inc()
}

// RunEnded records that a run ended for reason (agent.Reason: completed,
// max_turns, cancelled, error, …; or the runner's interrupted) after d.
func (m *Metrics) RunEnded(reason string, d time.Duration) {
	if m == nil {
		return
	}
	m.runsActive.Dec()
	m.runs.WithLabelValues(label(reason)).Inc()
	m.runSeconds.Observe(d.Seconds())
}

// Turn records one model turn.
func (m *Metrics) Turn() {
	if m == nil {
		return
	}
	m.turns.Inc()
}

// ToolExecuted records a tool call of tool that ended with outcome
// (agent.ToolEvent's: "ok", "error", "denied", "blocked", "interrupted",
// "invalid", "unknown_tool") after d. Failures of the call ([ToolFailed])
// count in rein_tool_errors_total too.
func (m *Metrics) ToolExecuted(tool, outcome string, d time.Duration) {
	if m == nil {
		return
	}
	m.toolExec.WithLabelValues(label(tool), label(outcome)).Inc()
	if ToolFailed(outcome) {
		m.toolErrors.WithLabelValues(label(tool)).Inc()
	}
	m.toolSeconds.WithLabelValues(label(tool)).Observe(d.Seconds())
}

// PermissionDecision records a permission decision (agent.PermissionEvent's
// "allow" or "deny") and who made it ("policy", "user", "hook",
// "timeout"). Denials are rein_permission_decisions_total{decision="deny"}.
func (m *Metrics) PermissionDecision(decision, by string) {
	if m == nil {
		return
	}
	m.permissions.WithLabelValues(label(decision), label(by)).Inc()
}

// Compaction records a context compaction and what triggered it
// (agent.CompactionEvent's: "budget", "overflow", "manual").
func (m *Metrics) Compaction(trigger string) {
	if m == nil {
		return
	}
	m.compactions.WithLabelValues(label(trigger)).Inc()
}

// ModelCall records a model call to provider's model that took d and the
// tokens it used.
func (m *Metrics) ModelCall(provider, model string, d time.Duration, input, output, cacheRead, cacheWrite int) {
	if m == nil {
		return
	}
	provider, model = label(provider), label(model)
	m.modelSeconds.WithLabelValues(provider, model).Observe(d.Seconds())
	for _, t := range [...]struct {
		kind string
		n    int
	}{{TokensInput, input}, {TokensOutput, output}, {TokensCacheRead, cacheRead}, {TokensCacheWrite, cacheWrite}} {
		if t.n > 0 {
			m.modelTokens.WithLabelValues(provider, model, t.kind).Add(float64(t.n))
		}
	}
}

// QueueDepth sets the number of runs waiting in the queue.
func (m *Metrics) QueueDepth(n int) {
	if m == nil {
		return
	}
	m.queueDepth.Set(float64(n))
}

// QueueAdd changes the number of runs waiting by delta (+1 enqueued, -1
// taken).
func (m *Metrics) QueueAdd(delta int) {
	if m == nil {
		return
	}
	m.queueDepth.Add(float64(delta))
}

// SSEClients changes the number of open SSE streams by delta (+1 when one
// opens, -1 when it closes).
func (m *Metrics) SSEClients(delta int) {
	if m == nil {
		return
	}
	m.sseClients.Add(float64(delta))
}

// HTTPRequest records an HTTP request: route is the pattern it matched
// ("/sessions/{id}"), never the raw path; status the response's code.
func (m *Metrics) HTTPRequest(method, route string, status int, d time.Duration) {
	if m == nil {
		return
	}
	m.httpRequests.WithLabelValues(label(method), label(route), strconv.Itoa(status)).Inc()
	m.httpDurations.WithLabelValues(label(method), label(route)).Observe(d.Seconds())
}

// label makes s a valid label value: Prometheus refuses (and the Vec
// methods panic on) invalid UTF-8.
func label(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}
