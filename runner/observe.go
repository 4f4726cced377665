package runner

import (
	"encoding/json"
	"sync"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/reinhq/rein/agent"
	"github.com/reinhq/rein/hook"
	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/session"
	"github.com/reinhq/rein/telemetry"
)

// Observer sees what runs do, for metrics and traces. Its methods are
// called from the goroutines running the runs and must not block.
type Observer interface {
	// Event sees every event of a run, in order.
	Event(run *session.Run, ev agent.Event)
	// Hook sees every hook run of a run.
	Hook(run *session.Run, r hook.Record)
}

// Telemetry is the Observer that feeds Prometheus metrics (SPEC OBS-2) and
// builds a trace per run (OBS-3): a span for the run, each model call,
// tool call and hook, with their real times, from the run's events.
type Telemetry struct {
	metrics *telemetry.Metrics
	tp      trace.TracerProvider
	// Queued, when set, reports the runs waiting; the queue depth gauge
	// follows it.
	Queued func() int

	mu   sync.Mutex
	runs map[string]*runTrace
}

// runTrace is what Telemetry follows of one run.
type runTrace struct {
	tracer     *telemetry.RunTracer
	start      time.Time
	modelStart time.Time
	provider   string
	model      string
	tools      map[string]time.Time // call id → start
}

// NewTelemetry returns an Observer over metrics m and tracer provider tp
// (either may be nil).
func NewTelemetry(m *telemetry.Metrics, tp trace.TracerProvider) *Telemetry {
	return &Telemetry{metrics: m, tp: tp, runs: map[string]*runTrace{}}
}

// Event implements Observer.
func (t *Telemetry) Event(run *session.Run, ev agent.Event) {
	t.mu.Lock()
	defer t.mu.Unlock()
	r := t.runs[run.ID]
	if r == nil {
		r = &runTrace{start: ev.Time, modelStart: ev.Time, tools: map[string]time.Time{},
			tracer: telemetry.NewRunTracerIn(t.tp, traceParent(run), run.SessionID, run.ID, run.Caller, ev.Time)}
		t.runs[run.ID] = r
		t.metrics.RunStarted()
		t.queueDepth()
	}
	switch ev.Type {
	case agent.EventRunStart:
		if rs := ev.RunStart; rs != nil {
			r.provider, r.model = rs.Provider, rs.Model
		}
	case agent.EventMessage:
		if m := ev.Message; m != nil && m.Role == llm.RoleUser {
			r.modelStart = ev.Time // the next model call starts now
		}
	case agent.EventUsage:
		t.modelCall(r, ev)
	case agent.EventToolStart:
		if ev.Tool != nil {
			r.tools[ev.Tool.ID] = ev.Time
		}
	case agent.EventToolEnd:
		if tl := ev.Tool; tl != nil {
			start, ok := r.tools[tl.ID]
			if !ok {
				start = ev.Time.Add(-time.Duration(tl.DurationMS) * time.Millisecond)
			}
			delete(r.tools, tl.ID)
			r.tracer.ToolCall(tl.ID, tl.Name, start, ev.Time, string(tl.Outcome))
			t.metrics.ToolExecuted(tl.Name, string(tl.Outcome), ev.Time.Sub(start))
		}
	case agent.EventPermissionDecision:
		if p := ev.Permission; p != nil {
			t.metrics.PermissionDecision(string(p.Decision), string(p.By))
		}
	case agent.EventCompaction:
		if c := ev.Compaction; c != nil {
			t.metrics.Compaction(string(c.Trigger))
		}
	case agent.EventDone:
		if d := ev.Done; d != nil {
			r.tracer.End(string(d.Reason), d.Error, ev.Time)
			t.metrics.RunEnded(string(d.Reason), ev.Time.Sub(r.start))
		}
		delete(t.runs, run.ID)
		t.queueDepth()
	}
}

// modelCall records the model call a usage event ends.
func (t *Telemetry) modelCall(r *runTrace, ev agent.Event) {
	u := ev.Usage
	if u == nil {
		return
	}
	t.metrics.Turn()
	in, out := int(u.Turn.InputTokens), int(u.Turn.OutputTokens)
	cr, cw := int(u.Turn.CacheReadTokens), int(u.Turn.CacheWriteTokens)
	t.metrics.ModelCall(r.provider, r.model, ev.Time.Sub(r.modelStart), in, out, cr, cw)
	r.tracer.ModelCall(telemetry.ModelCall{Provider: r.provider, Model: r.model, Start: r.modelStart, End: ev.Time,
		Turn: ev.Turn, InputTokens: in, OutputTokens: out, CacheReadTokens: cr, CacheWriteTokens: cw})
	r.modelStart = ev.Time
}

// Hook implements Observer.
func (t *Telemetry) Hook(run *session.Run, rec hook.Record) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if r := t.runs[run.ID]; r != nil {
		r.tracer.Hook(rec.Hook, string(rec.Event), rec.Time, rec.Duration, string(rec.Outcome))
	}
}

// queueDepth sets the queue depth gauge; t.mu is held.
func (t *Telemetry) queueDepth() {
	if t.Queued != nil {
		t.metrics.QueueDepth(t.Queued())
	}
}

// traceParent is the W3C traceparent the run's message came with, "" when
// none (the run's trace then starts a new one).
func traceParent(run *session.Run) string {
	if len(run.Options) == 0 {
		return ""
	}
	var sub session.Submission
	if json.Unmarshal(run.Options, &sub) != nil {
		return ""
	}
	return sub.TraceParent
}
