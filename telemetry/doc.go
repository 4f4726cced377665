// Package telemetry holds rein's observability: structured logs, Prometheus
// metrics and OpenTelemetry traces (SPEC OBS-1, OBS-2, OBS-3). It imports only
// the standard library, the Prometheus client, OpenTelemetry and rein's llm
// (a leaf, for its drop counts), so any package may use it.
//
// Logs: [NewLogger] builds a log/slog logger — JSON in server mode, text
// otherwise — whose handler is wrapped by [NewRedactingHandler]: attribute
// keys that name secrets (authorization, api_key, token, password, cookie, …)
// get [Redacted] as their value, and credential-shaped text (Bearer …, sk-…,
// ghp_…, AIza…, xox?-…, JWTs, PEM private keys, passwords in URLs) is masked
// in the message and in every attribute, nested groups included. Records
// carry the stable keys [KeySessionID], [KeyRunID], [KeyTurn], [KeyTool] and
// [KeyCaller].
//
// Metrics: [Metrics] owns a Prometheus registry (with the Go and process
// collectors) and has one explicit method per thing counted; the runner and
// the server call them, [Metrics.Handler] serves the exposition. The
// adapters' drop counts (llm.RecordDrop) are read from the llm package at
// scrape time as rein_llm_dropped_stream_items_total. A nil
// *Metrics records nothing, so metrics are optional everywhere.
//
// Traces: [SetupTracing] returns an OTLP/HTTP-exporting tracer provider when
// the standard OTEL_EXPORTER_OTLP_* variables ask for one and a no-op
// provider otherwise. [RunTracer] turns a run's events into spans after the
// fact — a root span per run with a child per model call, tool call and
// hook, each with its real start and end time — so the run loop itself
// holds no tracing code.
package telemetry
