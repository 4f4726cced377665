package telemetry

import (
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// OBS-3, API-1: a run whose message came with a traceparent joins that
// trace, its rein.run span a child of the caller's span; a malformed one
// starts a trace of its own. (A traceparent whose sampled flag is off
// keeps the run's spans out of a parent-based sampler's export: the
// caller's decision, TestRunTracerUnsampledParent.)
func TestRunTracerJoinsTraceParent_OBS3(t *testing.T) {
	const trace, parent = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	cases := []struct {
		name, header string
		joins        bool
	}{
		{"valid", "00-" + trace + "-" + parent + "-01", true},
		{"none", "", false},
		{"malformed", "00-" + trace + "-" + parent, false},
		{"zero trace id", "00-00000000000000000000000000000000-" + parent + "-01", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			sr := tracetest.NewSpanRecorder()
			tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(sr))
			t0 := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
			rt := NewRunTracerIn(tp, c.header, "s1", "r1", "alice", t0)
			rt.ToolCall("call_1", "bash", t0, t0.Add(time.Second), "ok")
			rt.End("completed", "", t0.Add(2*time.Second))
			spans := sr.Ended()
			if len(spans) != 2 {
				t.Fatalf("%d spans", len(spans))
			}
			for _, s := range spans {
				if got := s.SpanContext().TraceID().String() == trace; got != c.joins {
					t.Errorf("%s in trace %s: joined %v, want %v", s.Name(), s.SpanContext().TraceID(), got, c.joins)
				}
				if s.Name() == "rein.run" {
					if got := s.Parent().SpanID().String() == parent && s.Parent().IsRemote(); got != c.joins {
						t.Errorf("rein.run parent %v (remote %v): child of the caller's span %v, want %v", s.Parent().SpanID(), s.Parent().IsRemote(), got, c.joins)
					}
				}
			}
		})
	}
}

// A caller that did not sample its trace (flags 00) gets no run spans
// from the default, parent-based sampler.
func TestRunTracerUnsampledParent(t *testing.T) {
	sr := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(sr))
	t0 := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	rt := NewRunTracerIn(tp, "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00", "s1", "r1", "alice", t0)
	rt.End("completed", "", t0.Add(time.Second))
	if n := len(sr.Ended()); n != 0 {
		t.Errorf("%d spans recorded under an unsampled parent", n)
	}
}
