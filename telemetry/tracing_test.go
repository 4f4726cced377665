package telemetry

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// spanView is what the tests compare of a recorded span.
type spanView struct {
	Name        string
	Parent      string // name of the parent span, "" for a root
	Start, End  time.Time
	Status      codes.Code
	Description string
	Attrs       map[string]string
}

// view reduces recorded spans to what the tests compare.
func view(spans []sdktrace.ReadOnlySpan) []spanView {
	names := map[trace.SpanID]string{}
	for _, s := range spans {
		names[s.SpanContext().SpanID()] = s.Name()
	}
	var out []spanView
	for _, s := range spans {
		v := spanView{Name: s.Name(), Start: s.StartTime(), End: s.EndTime(), Status: s.Status().Code,
			Description: s.Status().Description, Attrs: map[string]string{}}
		if s.Parent().IsValid() {
			v.Parent = names[s.Parent().SpanID()]
			if v.Parent == "" {
				v.Parent = "?unknown"
			}
		}
		for _, a := range s.Attributes() {
			v.Attrs[string(a.Key)] = a.Value.String()
		}
		out = append(out, v)
	}
	return out
}

// TestRunTracer checks the spans a run produces.
func TestRunTracer(t *testing.T) {
	sr := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(sr))
	t0 := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }

	rt := NewRunTracer(tp, "s1", "r1", "alice", t0)
	rt.Hook("audit", "pre_model_request", at(1), 4*time.Millisecond, "continue")
	rt.ModelCall(ModelCall{Provider: "anthropic", Model: "claude-x", Start: at(10), End: at(900), Turn: 1,
		InputTokens: 100, OutputTokens: 20, CacheReadTokens: 80, StopReason: "tool_use"})
	rt.ToolCall("call_1", "bash", at(910), at(1500), "error")
	rt.ToolCall("call_2", "read_file", at(910), at(920), "ok")
	rt.ModelCall(ModelCall{Provider: "anthropic", Model: "claude-x", Start: at(1600), End: at(1700), Turn: 2,
		Err: "401 unauthorized for " + openaiKey})
	rt.End("error", "model: 401 for "+openaiKey, at(1800))
	rt.ToolCall("late", "bash", at(1900), at(2000), "ok") // after End: dropped
	rt.End("completed", "", at(3000))                     // second End: ignored

	want := []spanView{{
		Name: "hook pre_model_request", Parent: "rein.run", Start: at(1), End: at(5),
		Attrs: map[string]string{AttrHook: "audit", AttrHookEvent: "pre_model_request", AttrOutcome: "continue"},
	}, {
		Name: "chat claude-x", Parent: "rein.run", Start: at(10), End: at(900),
		Attrs: map[string]string{AttrGenAIOperation: "chat", AttrGenAIProvider: "anthropic", AttrGenAIRequestModel: "claude-x",
			AttrTurn: "1", AttrGenAIInputTokens: "100", AttrGenAIOutputTokens: "20", AttrGenAICacheReadTokens: "80",
			AttrGenAICacheWriteTokens: "0", AttrGenAIFinishReasons: `["tool_use"]`},
	}, {
		Name: "execute_tool bash", Parent: "rein.run", Start: at(910), End: at(1500), Status: codes.Error, Description: "error",
		Attrs: map[string]string{AttrGenAIOperation: "execute_tool", AttrGenAIToolName: "bash", AttrGenAIToolCallID: "call_1",
			AttrTool: "bash", AttrOutcome: "error"},
	}, {
		Name: "execute_tool read_file", Parent: "rein.run", Start: at(910), End: at(920),
		Attrs: map[string]string{AttrGenAIOperation: "execute_tool", AttrGenAIToolName: "read_file", AttrGenAIToolCallID: "call_2",
			AttrTool: "read_file", AttrOutcome: "ok"},
	}, {
		Name: "chat claude-x", Parent: "rein.run", Start: at(1600), End: at(1700), Status: codes.Error,
		Description: "401 unauthorized for " + Redacted,
		Attrs: map[string]string{AttrGenAIOperation: "chat", AttrGenAIProvider: "anthropic", AttrGenAIRequestModel: "claude-x",
			AttrTurn: "2", AttrGenAIInputTokens: "0", AttrGenAIOutputTokens: "0", AttrGenAICacheReadTokens: "0",
			AttrGenAICacheWriteTokens: "0"},
	}, {
		Name: "rein.run", Start: t0, End: at(1800), Status: codes.Error, Description: "model: 401 for " + Redacted,
		Attrs: map[string]string{AttrGenAIOperation: "invoke_agent", AttrSessionID: "s1", AttrGenAIConversationID: "s1",
			AttrRunID: "r1", AttrCaller: "alice", AttrReason: "error"},
	}}
	if diff := cmp.Diff(want, view(sr.Ended())); diff != "" {
		t.Errorf("spans (-want +got):\n%s", diff)
	}
	ended := sr.Ended()
	root := ended[len(ended)-1].SpanContext()
	for _, s := range ended[:len(ended)-1] {
		if s.SpanContext().TraceID() != root.TraceID() {
			t.Errorf("span %s is in trace %s, want the run's %s", s.Name(), s.SpanContext().TraceID(), root.TraceID())
		}
	}
	if got := trace.SpanContextFromContext(rt.Context(context.Background())); !got.Equal(root) {
		t.Errorf("Context carries span %v, want the run's %v", got, root)
	}
}

// TestRunTracerNil checks that a nil tracer and a nil provider are no-ops.
func TestRunTracerNil(t *testing.T) {
	var rt *RunTracer
	rt.ModelCall(ModelCall{})
	rt.ToolCall("", "", time.Time{}, time.Time{}, "")
	rt.Hook("", "", time.Time{}, 0, "")
	rt.End("", "", time.Time{})
	if ctx := context.Background(); rt.Context(ctx) != ctx {
		t.Error("nil RunTracer changed the context")
	}
	// A nil provider is a no-op one.
	rt = NewRunTracer(nil, "s", "r", "c", time.Now())
	rt.ToolCall("1", "bash", time.Now(), time.Now(), "ok")
	rt.End("completed", "", time.Now())
}

// env is a getenv reading m.
func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

// TestSetupTracingNoop covers the settings that leave tracing off.
func TestSetupTracingNoop(t *testing.T) {
	for _, e := range []map[string]string{
		{},
		{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:1", "OTEL_SDK_DISABLED": "true"},
		{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://127.0.0.1:1", "OTEL_TRACES_EXPORTER": "none"},
	} {
		tp, shutdown, err := SetupTracing(context.Background(), env(e), "rein", "test")
		if err != nil {
			t.Fatalf("%v: %v", e, err)
		}
		if _, ok := tp.(noop.TracerProvider); !ok {
			t.Errorf("%v: provider %T, want a no-op one", e, tp)
		}
		if err := shutdown(context.Background()); err != nil {
			t.Errorf("%v: shutdown: %v", e, err)
		}
	}
}

// TestSetupTracingBadConfig covers settings SetupTracing refuses.
func TestSetupTracingBadConfig(t *testing.T) {
	for _, e := range []map[string]string{
		{"OTEL_EXPORTER_OTLP_ENDPOINT": "localhost:4318"},
		{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "ftp://collector"},
		{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"},
		{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318", "OTEL_EXPORTER_OTLP_HEADERS": "authorization"},
		{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318", "OTEL_EXPORTER_OTLP_TRACES_HEADERS": "a=%zz"},
		{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318", "OTEL_EXPORTER_OTLP_TIMEOUT": "10s"},
		{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318", "OTEL_EXPORTER_OTLP_COMPRESSION": "zstd"},
		{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318", "OTEL_RESOURCE_ATTRIBUTES": "novalue"},
		{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318", "OTEL_EXPORTER_OTLP_HEADERS": "bad key=secret"},
		{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318", "OTEL_EXPORTER_OTLP_CERTIFICATE": "/nonexistent/ca.pem"},
		{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318", "OTEL_EXPORTER_OTLP_CLIENT_KEY": "/nonexistent/key.pem"},
	} {
		tp, _, err := SetupTracing(context.Background(), env(e), "rein", "test")
		if !errors.Is(err, ErrTracingConfig) || strings.Contains(err.Error(), "secret") {
			t.Errorf("%v: error %v, want ErrTracingConfig that hides header values", e, err)
		}
		if _, ok := tp.(noop.TracerProvider); !ok {
			t.Errorf("%v: provider %T on error, want a no-op one", e, tp)
		}
	}
}

// collector is an OTLP/HTTP endpoint that records what it receives.
type collector struct {
	mu   sync.Mutex
	reqs []received
}

// received is what the collector saw of one request.
type received struct {
	Method, Path, ContentType, Header, UserAgent string
	BodyLen                                      int
}

// ServeHTTP records the request and accepts it.
func (c *collector) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	c.mu.Lock()
	c.reqs = append(c.reqs, received{r.Method, r.URL.Path, r.Header.Get("Content-Type"), r.Header.Get("X-Test"),
		r.Header.Get("User-Agent"), len(body)})
	c.mu.Unlock()
	w.Header().Set("Content-Type", "application/x-protobuf")
	w.WriteHeader(http.StatusOK)
}

// received returns the requests so far.
func (c *collector) received() []received {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]received(nil), c.reqs...)
}

// TestSetupTracingOTLP exports through SetupTracing's provider to a
// collector configured by the OTEL_* variables.
func TestSetupTracingOTLP(t *testing.T) {
	tests := []struct {
		name        string
		env         func(url string) map[string]string
		path        string
		contentType string
	}{{
		name: "base endpoint",
		env: func(u string) map[string]string {
			return map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": u, "OTEL_EXPORTER_OTLP_HEADERS": "x-test=a%20b, other=1"}
		},
		path:        "/v1/traces",
		contentType: "application/x-protobuf",
	}, {
		name: "traces endpoint as is",
		env: func(u string) map[string]string {
			return map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:1", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": u + "/custom/spans",
				"OTEL_EXPORTER_OTLP_TRACES_HEADERS": "x-test=a%20b", "OTEL_EXPORTER_OTLP_TIMEOUT": "5000"}
		},
		path:        "/custom/spans",
		contentType: "application/x-protobuf",
	}, {
		name: "json gzip",
		env: func(u string) map[string]string {
			return map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": u, "OTEL_EXPORTER_OTLP_HEADERS": "x-test=a%20b",
				"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "http/json", "OTEL_EXPORTER_OTLP_COMPRESSION": "gzip"}
		},
		path:        "/v1/traces",
		contentType: "application/json",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			col := &collector{}
			srv := httptest.NewServer(col)
			defer srv.Close()
			ctx := context.Background()
			tp, shutdown, err := SetupTracing(ctx, env(tt.env(srv.URL)), "rein", "test")
			if err != nil {
				t.Fatal(err)
			}
			rt := NewRunTracer(tp, "s1", "r1", "alice", time.Now())
			rt.ToolCall("c1", "bash", time.Now(), time.Now(), "ok")
			rt.End("completed", "", time.Now())
			if err := shutdown(ctx); err != nil { // flushes the batch
				t.Fatalf("shutdown: %v", err)
			}
			got := col.received()
			if len(got) == 0 {
				t.Fatal("the collector received nothing")
			}
			for _, r := range got {
				if r.Method != http.MethodPost || r.Path != tt.path || r.ContentType != tt.contentType ||
					r.Header != "a b" || r.UserAgent != "rein/test" || r.BodyLen == 0 {
					t.Errorf("received %+v, want a POST to %s of a non-empty %s body with X-Test: a b and User-Agent: rein/test",
						r, tt.path, tt.contentType)
				}
			}
		})
	}
}

// TestParseKeyValues covers the OTEL_* list syntax.
func TestParseKeyValues(t *testing.T) {
	got, err := parseKeyValues(" a = 1 ,b=x%2Cy,, c=")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]string{"a": "1", "b": "x,y", "c": ""}, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if _, err := parseKeyValues("authorization:Bearer sk-secretsecretsecret"); err == nil || strings.Contains(err.Error(), "secret") {
		t.Errorf("malformed entry: error %v, want one that hides the value", err)
	}
}
