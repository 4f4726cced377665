package telemetry

import (
	"context"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// TracerName is the instrumentation scope of rein's spans.
const TracerName = "github.com/reinhq/rein/telemetry"

// Span attribute keys: rein's own, and the OpenTelemetry GenAI semantic
// conventions where one fits.
const (
	AttrSessionID = "rein.session_id"
	AttrRunID     = "rein.run_id"
	AttrCaller    = "rein.caller"
	AttrReason    = "rein.reason"
	AttrTurn      = "rein.turn"
	AttrTool      = "rein.tool"
	AttrOutcome   = "rein.outcome"
	AttrHook      = "rein.hook"
	AttrHookEvent = "rein.hook.event"

	AttrGenAIOperation        = "gen_ai.operation.name"
	AttrGenAIProvider         = "gen_ai.provider.name"
	AttrGenAIConversationID   = "gen_ai.conversation.id"
	AttrGenAIRequestModel     = "gen_ai.request.model"
	AttrGenAIFinishReasons    = "gen_ai.response.finish_reasons"
	AttrGenAIInputTokens      = "gen_ai.usage.input_tokens"
	AttrGenAIOutputTokens     = "gen_ai.usage.output_tokens"
	AttrGenAICacheReadTokens  = "gen_ai.usage.cache_read.input_tokens"
	AttrGenAICacheWriteTokens = "gen_ai.usage.cache_creation.input_tokens"
	AttrGenAIToolName         = "gen_ai.tool.name"
	AttrGenAIToolCallID       = "gen_ai.tool.call.id"
)

// ModelCall describes one model call of a run for [RunTracer.ModelCall].
type ModelCall struct {
	// Provider and Model name the model called ("anthropic",
	// "claude-sonnet-4-5").
	Provider, Model string
	// Start and End are when the request was sent and the response ended.
	Start, End time.Time
	// Turn numbers the call in its run, from 1.
	Turn int
	// Token usage of the call.
	InputTokens, OutputTokens, CacheReadTokens, CacheWriteTokens int
	// StopReason is why the model stopped ("end_turn", "tool_use", …).
	StopReason string
	// Err describes a failed call; "" when it succeeded.
	Err string
}

// RunTracer records one run as a trace after the fact, from what the run
// reports: a root span "rein.run" from the run's start to its end, and as
// its children a span per model call ("chat MODEL"), tool call
// ("execute_tool TOOL") and hook ("hook EVENT"), each created with its
// real start and end times. The run loop holds no tracing code: the runner
// feeds the tracer from the run's events.
//
// Methods are safe for concurrent use; after [RunTracer.End] they record
// nothing. A nil *RunTracer records nothing. Error text is masked
// ([Mask]) before it reaches a span.
type RunTracer struct {
	tracer trace.Tracer
	root   trace.Span

	mu    sync.Mutex
	ended bool
}

// NewRunTracer opens the root span of a run that started at start. A nil
// tp is a no-op provider.
func NewRunTracer(tp trace.TracerProvider, sessionID, runID, caller string, start time.Time) *RunTracer {
	return NewRunTracerIn(tp, "", sessionID, runID, caller, start)
}

// NewRunTracerIn is NewRunTracer for a run whose trace joins the caller's:
// traceparent is the W3C traceparent header the run's request carried, and
// the run's span becomes a child of the span it names. A traceparent that
// does not parse is ignored: the run's trace starts a new one.
func NewRunTracerIn(tp trace.TracerProvider, traceparent, sessionID, runID, caller string, start time.Time) *RunTracer {
	if tp == nil {
		tp = noop.NewTracerProvider()
	}
	t := tp.Tracer(TracerName)
	ctx, root := context.Background(), trace.WithNewRoot()
	if traceparent != "" {
		remote := propagation.TraceContext{}.Extract(ctx, propagation.MapCarrier{"traceparent": traceparent})
		if trace.SpanContextFromContext(remote).IsValid() {
			ctx, root = remote, trace.WithSpanKind(trace.SpanKindInternal)
		}
	}
	_, span := t.Start(ctx, "rein.run",
		root,
		trace.WithTimestamp(start),
		trace.WithSpanKind(trace.SpanKindInternal),
		trace.WithAttributes(
			attribute.String(AttrGenAIOperation, "invoke_agent"),
			attribute.String(AttrSessionID, sessionID),
			attribute.String(AttrGenAIConversationID, sessionID),
			attribute.String(AttrRunID, runID),
			attribute.String(AttrCaller, caller),
		))
	return &RunTracer{tracer: t, root: span}
}

// Context returns ctx carrying the run's span, so that outgoing requests
// made for the run (HTTP hooks, model calls) can propagate its trace.
func (rt *RunTracer) Context(ctx context.Context) context.Context {
	if rt == nil {
		return ctx
	}
	return trace.ContextWithSpan(ctx, rt.root)
}

// child records a finished span under the run's span; false when the run
// has ended.
func (rt *RunTracer) child(name string, kind trace.SpanKind, start, end time.Time, status codes.Code, desc string, attrs ...attribute.KeyValue) bool {
	if rt == nil {
		return false
	}
	rt.mu.Lock()
	defer rt.mu.Unlock()
	if rt.ended {
		return false
	}
	_, span := rt.tracer.Start(trace.ContextWithSpan(context.Background(), rt.root), name,
		trace.WithTimestamp(start), trace.WithSpanKind(kind), trace.WithAttributes(attrs...))
	if status != codes.Unset {
		span.SetStatus(status, Mask(desc))
	}
	span.End(trace.WithTimestamp(end))
	return true
}

// ModelCall records a model call.
func (rt *RunTracer) ModelCall(c ModelCall) {
	attrs := []attribute.KeyValue{
		attribute.String(AttrGenAIOperation, "chat"),
		attribute.String(AttrGenAIProvider, c.Provider),
		attribute.String(AttrGenAIRequestModel, c.Model),
		attribute.Int(AttrTurn, c.Turn),
		attribute.Int(AttrGenAIInputTokens, c.InputTokens),
		attribute.Int(AttrGenAIOutputTokens, c.OutputTokens),
		attribute.Int(AttrGenAICacheReadTokens, c.CacheReadTokens),
		attribute.Int(AttrGenAICacheWriteTokens, c.CacheWriteTokens),
	}
	if c.StopReason != "" {
		attrs = append(attrs, attribute.StringSlice(AttrGenAIFinishReasons, []string{c.StopReason}))
	}
	status := codes.Unset
	if c.Err != "" {
		status = codes.Error
	}
	rt.child("chat "+c.Model, trace.SpanKindClient, c.Start, c.End, status, c.Err, attrs...)
}

// ToolCall records the tool call id of tool name, from start to end, with
// its outcome (agent.ToolEvent's: "ok", "error", "denied", "blocked",
// "interrupted", "invalid", "unknown_tool"). Outcomes that are failures of
// the call ([ToolFailed]) mark the span as an error.
func (rt *RunTracer) ToolCall(id, name string, start, end time.Time, outcome string) {
	status := codes.Unset
	if ToolFailed(outcome) {
		status = codes.Error
	}
	rt.child("execute_tool "+name, trace.SpanKindInternal, start, end, status, outcome,
		attribute.String(AttrGenAIOperation, "execute_tool"),
		attribute.String(AttrGenAIToolName, name),
		attribute.String(AttrGenAIToolCallID, id),
		attribute.String(AttrTool, name),
		attribute.String(AttrOutcome, outcome))
}

// Hook records a run of the hook name on event, from start for d, with its
// outcome (hook.Record's: "continue", "block", "force_continue", "stop",
// "error", "timeout", "interrupted"); error and timeout mark the span as
// an error.
func (rt *RunTracer) Hook(name, event string, start time.Time, d time.Duration, outcome string) {
	status := codes.Unset
	if outcome == "error" || outcome == "timeout" {
		status = codes.Error
	}
	rt.child("hook "+event, trace.SpanKindInternal, start, start.Add(d), status, outcome,
		attribute.String(AttrHook, name),
		attribute.String(AttrHookEvent, event),
		attribute.String(AttrOutcome, outcome))
}

// End closes the run's span at end with the run's end reason; a non-empty
// err marks it as an error, with err (masked) as the description. Later
// calls do nothing.
func (rt *RunTracer) End(reason, err string, end time.Time) {
	if rt == nil {
		return
	}
	rt.mu.Lock()
	defer rt.mu.Unlock()
	if rt.ended {
		return
	}
	rt.ended = true
	rt.root.SetAttributes(attribute.String(AttrReason, reason))
	if err != "" {
		rt.root.SetStatus(codes.Error, Mask(err))
	}
	rt.root.End(trace.WithTimestamp(end))
}

// ToolFailed reports whether a tool call's outcome is a failure of the
// call — "error", "invalid", "unknown_tool" — rather than a success, a
// refusal ("denied", "blocked") or a cancellation ("interrupted").
func ToolFailed(outcome string) bool {
	switch outcome {
	case "error", "invalid", "unknown_tool":
		return true
	}
	return false
}
