package telemetry

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/reinhq/rein/llm/vendorhttp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	resourcepb "go.opentelemetry.io/proto/otlp/resource/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

// Defaults and bounds of the OTLP/HTTP exporter.
const (
	otlpDefaultTimeout = 10 * time.Second
	otlpBackoffStart   = 250 * time.Millisecond
	otlpBackoffMax     = 5 * time.Second
	otlpMaxRespBody    = 64 << 10 // bytes of a response read, at most
	otlpErrBodyLen     = 200      // bytes of a response quoted in an error
)

// otlpConfig is what the OTLP/HTTP span exporter needs; its zero value
// (but for URL) means the defaults: protobuf, no compression, a 10 s
// timeout and the system's certificate pool.
type otlpConfig struct {
	URL       string            // traces endpoint, posted to as is
	Headers   map[string]string // sent with every request; values are secrets
	Timeout   time.Duration     // bounds one export, retries included; 0 means 10 s
	Gzip      bool              // gzip the body (Content-Encoding: gzip)
	JSON      bool              // OTLP/JSON instead of binary protobuf
	TLS       *tls.Config       // nil means Go's defaults
	UserAgent string            // "rein/<version>"
}

// otlpExporter is an sdktrace.SpanExporter that POSTs OTLP
// ExportTraceServiceRequests over HTTP(S), retrying what the OTLP spec
// calls retryable. It imports no gRPC code: the request envelope is
// written with protowire, the spans with the generated tracepb types.
type otlpExporter struct {
	cfg    otlpConfig
	client *http.Client
	closed atomic.Bool
}

var _ sdktrace.SpanExporter = (*otlpExporter)(nil)

// newOTLPExporter returns an exporter posting to cfg.URL.
func newOTLPExporter(cfg otlpConfig) *otlpExporter {
	if cfg.Timeout <= 0 {
		cfg.Timeout = otlpDefaultTimeout
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	if cfg.TLS != nil {
		tr.TLSClientConfig = cfg.TLS
	}
	return &otlpExporter{cfg: cfg, client: &http.Client{Transport: tr}}
}

// ExportSpans sends spans in one request, retrying transient failures
// until the configured timeout or ctx ends. Zero spans send nothing; after
// Shutdown it fails without sending.
func (e *otlpExporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	if e.closed.Load() {
		return errors.New("telemetry: OTLP exporter is shut down")
	}
	if len(spans) == 0 {
		return nil
	}
	body, contentType, err := e.encode(spans)
	if err != nil {
		return fmt.Errorf("telemetry: OTLP export: encode: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, e.cfg.Timeout)
	defer cancel()
	return e.post(ctx, body, contentType)
}

// Shutdown stops the exporter: later exports fail without sending. It
// may be called more than once.
func (e *otlpExporter) Shutdown(context.Context) error {
	if e.closed.CompareAndSwap(false, true) {
		e.client.CloseIdleConnections()
	}
	return nil
}

// encode returns the request body, compressed if configured, and its
// content type.
func (e *otlpExporter) encode(spans []sdktrace.ReadOnlySpan) ([]byte, string, error) {
	rss := resourceSpans(spans)
	var (
		body        []byte
		contentType string
		err         error
	)
	if e.cfg.JSON {
		body, err = marshalTracesJSON(rss)
		contentType = "application/json"
	} else {
		body, err = marshalTracesProto(rss)
		contentType = "application/x-protobuf"
	}
	if err != nil || !e.cfg.Gzip {
		return body, contentType, err
	}
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(body); err != nil {
		return nil, "", err
	}
	if err := zw.Close(); err != nil {
		return nil, "", err
	}
	return buf.Bytes(), contentType, nil
}

// marshalTracesProto writes an ExportTraceServiceRequest: field 1
// (resource_spans), length-delimited, once per ResourceSpans.
func marshalTracesProto(rss []*tracepb.ResourceSpans) ([]byte, error) {
	var out []byte
	for _, rs := range rss {
		b, err := proto.Marshal(rs)
		if err != nil {
			return nil, err
		}
		out = protowire.AppendTag(out, 1, protowire.BytesType)
		out = protowire.AppendBytes(out, b)
	}
	return out, nil
}

// post sends body until the collector accepts it, a non-retryable answer
// comes, or ctx ends.
func (e *otlpExporter) post(ctx context.Context, body []byte, contentType string) error {
	for attempt := 0; ; attempt++ {
		retry, wait, err := e.attempt(ctx, body, contentType)
		if err == nil {
			return nil
		}
		if !retry {
			return fmt.Errorf("telemetry: OTLP export: %w", err)
		}
		if wait < 0 {
			wait = backoff(attempt)
		}
		if deadline, ok := ctx.Deadline(); ok && time.Until(deadline) < wait {
			return fmt.Errorf("telemetry: OTLP export: giving up before the deadline after %d attempts: %w", attempt+1, err)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("telemetry: OTLP export: %w (after %d attempts: %w)", ctx.Err(), attempt+1, err)
		case <-t.C:
		}
	}
}

// attempt makes one request. It reports whether a failure may be retried
// and, when the collector said so with Retry-After, after how long (else a
// negative wait).
func (e *otlpExporter) attempt(ctx context.Context, body []byte, contentType string) (retry bool, wait time.Duration, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.cfg.URL, bytes.NewReader(body))
	if err != nil {
		return false, 0, err
	}
	if e.cfg.UserAgent != "" {
		req.Header.Set("User-Agent", e.cfg.UserAgent)
	}
	for k, v := range e.cfg.Headers {
		req.Header.Set(k, v)
	}
	req.Header.Set("Content-Type", contentType)
	if e.cfg.Gzip {
		req.Header.Set("Content-Encoding", "gzip")
	}
	resp, err := e.client.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return false, 0, err
		}
		var certErr *tls.CertificateVerificationError
		return !errors.As(err, &certErr), -1, err
	}
	respBody, _ := io.ReadAll(io.LimitReader(resp.Body, otlpMaxRespBody))
	_ = resp.Body.Close()
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return false, 0, nil
	}
	err = statusError(resp.StatusCode, respBody)
	switch resp.StatusCode {
	case http.StatusTooManyRequests, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return true, retryAfter(resp.Header.Get("Retry-After"), time.Now()), err
	}
	return false, 0, err
}

// statusError describes a refused request by its status and the start of
// the body the collector sent.
func statusError(code int, body []byte) error {
	snippet := strings.ToValidUTF8(string(body[:min(len(body), otlpErrBodyLen)]), "?")
	snippet = strings.TrimSpace(snippet)
	if snippet == "" {
		return fmt.Errorf("collector answered %d %s", code, http.StatusText(code))
	}
	return fmt.Errorf("collector answered %d %s: %q", code, http.StatusText(code), snippet)
}

// retryAfter reads a Retry-After header, delay seconds or an HTTP date,
// as a wait from now; -1 when absent or unreadable.
func retryAfter(h string, now time.Time) time.Duration {
	if d, ok := vendorhttp.ParseRetryAfter(h, now); ok {
		return d
	}
	return -1
}

// backoff is the wait before retry number attempt+1: 250 ms doubling up
// to 5 s, each with ±50 % jitter, never over 5 s.
func backoff(attempt int) time.Duration {
	d := otlpBackoffStart << min(attempt, 10)
	d = min(d, otlpBackoffMax)
	return min(d/2+rand.N(d), otlpBackoffMax)
}

// scopeKey identifies an instrumentation scope for grouping.
type scopeKey struct {
	name, version, schemaURL string
	attrs                    attribute.Distinct
}

// resourceKey identifies a resource for grouping.
type resourceKey struct {
	schemaURL string
	attrs     attribute.Distinct
}

// resourceSpans maps spans to OTLP, grouped by resource and then by
// instrumentation scope, in the order they first appear.
func resourceSpans(spans []sdktrace.ReadOnlySpan) []*tracepb.ResourceSpans {
	var out []*tracepb.ResourceSpans
	byRes := map[resourceKey]*tracepb.ResourceSpans{}
	byScope := map[resourceKey]map[scopeKey]*tracepb.ScopeSpans{}
	for _, s := range spans {
		res := s.Resource()
		var rk resourceKey
		if res != nil {
			rk = resourceKey{res.SchemaURL(), res.Equivalent()}
		}
		rs := byRes[rk]
		if rs == nil {
			rs = &tracepb.ResourceSpans{Resource: &resourcepb.Resource{}}
			if res != nil {
				rs.Resource.Attributes = keyValues(res.Attributes())
				rs.SchemaUrl = res.SchemaURL()
			}
			byRes[rk] = rs
			byScope[rk] = map[scopeKey]*tracepb.ScopeSpans{}
			out = append(out, rs)
		}
		sc := s.InstrumentationScope()
		sk := scopeKey{sc.Name, sc.Version, sc.SchemaURL, sc.Attributes.Equivalent()}
		ss := byScope[rk][sk]
		if ss == nil {
			ss = &tracepb.ScopeSpans{
				Scope: &commonpb.InstrumentationScope{
					Name: sc.Name, Version: sc.Version, Attributes: keyValues(sc.Attributes.ToSlice()),
				},
				SchemaUrl: sc.SchemaURL,
			}
			byScope[rk][sk] = ss
			rs.ScopeSpans = append(rs.ScopeSpans, ss)
		}
		ss.Spans = append(ss.Spans, spanPB(s))
	}
	return out
}

// spanPB maps one span.
func spanPB(s sdktrace.ReadOnlySpan) *tracepb.Span {
	sc := s.SpanContext()
	tid, sid := sc.TraceID(), sc.SpanID()
	p := &tracepb.Span{
		TraceId:                tid[:],
		SpanId:                 sid[:],
		TraceState:             sc.TraceState().String(),
		Flags:                  spanFlags(sc.TraceFlags(), s.Parent()),
		Name:                   s.Name(),
		Kind:                   spanKindPB(s.SpanKind()),
		StartTimeUnixNano:      unixNano(s.StartTime()),
		EndTimeUnixNano:        unixNano(s.EndTime()),
		Attributes:             keyValues(s.Attributes()),
		DroppedAttributesCount: count32(s.DroppedAttributes()),
		DroppedEventsCount:     count32(s.DroppedEvents()),
		DroppedLinksCount:      count32(s.DroppedLinks()),
		Status:                 statusPB(s.Status()),
	}
	if parent := s.Parent(); parent.IsValid() {
		psid := parent.SpanID()
		p.ParentSpanId = psid[:]
	}
	for _, ev := range s.Events() {
		p.Events = append(p.Events, &tracepb.Span_Event{
			TimeUnixNano:           unixNano(ev.Time),
			Name:                   ev.Name,
			Attributes:             keyValues(ev.Attributes),
			DroppedAttributesCount: count32(ev.DroppedAttributeCount),
		})
	}
	for _, l := range s.Links() {
		ltid, lsid := l.SpanContext.TraceID(), l.SpanContext.SpanID()
		p.Links = append(p.Links, &tracepb.Span_Link{
			TraceId:                ltid[:],
			SpanId:                 lsid[:],
			TraceState:             l.SpanContext.TraceState().String(),
			Attributes:             keyValues(l.Attributes),
			DroppedAttributesCount: count32(l.DroppedAttributeCount),
			Flags:                  spanFlags(l.SpanContext.TraceFlags(), l.SpanContext),
		})
	}
	return p
}

// spanFlags puts the W3C trace flags in the low 8 bits and says whether
// the parent (or linked) span context is remote.
func spanFlags(tf trace.TraceFlags, other trace.SpanContext) uint32 {
	f := uint32(tf) | uint32(tracepb.SpanFlags_SPAN_FLAGS_CONTEXT_HAS_IS_REMOTE_MASK)
	if other.IsRemote() {
		f |= uint32(tracepb.SpanFlags_SPAN_FLAGS_CONTEXT_IS_REMOTE_MASK)
	}
	return f
}

// spanKindPB maps otel's span kinds (1..5) to the proto's, which share
// the numbers; anything else is unspecified.
func spanKindPB(k trace.SpanKind) tracepb.Span_SpanKind {
	switch k {
	case trace.SpanKindInternal:
		return tracepb.Span_SPAN_KIND_INTERNAL
	case trace.SpanKindServer:
		return tracepb.Span_SPAN_KIND_SERVER
	case trace.SpanKindClient:
		return tracepb.Span_SPAN_KIND_CLIENT
	case trace.SpanKindProducer:
		return tracepb.Span_SPAN_KIND_PRODUCER
	case trace.SpanKindConsumer:
		return tracepb.Span_SPAN_KIND_CONSUMER
	}
	return tracepb.Span_SPAN_KIND_UNSPECIFIED
}

// statusPB maps a span status. otel numbers its codes Unset=0, Error=1,
// Ok=2, the proto Unset=0, Ok=1, Error=2; the description goes only with
// an error.
func statusPB(st sdktrace.Status) *tracepb.Status {
	switch st.Code {
	case codes.Ok:
		return &tracepb.Status{Code: tracepb.Status_STATUS_CODE_OK}
	case codes.Error:
		return &tracepb.Status{Code: tracepb.Status_STATUS_CODE_ERROR, Message: st.Description}
	}
	return &tracepb.Status{}
}

// keyValues maps attributes.
func keyValues(kvs []attribute.KeyValue) []*commonpb.KeyValue {
	if len(kvs) == 0 {
		return nil
	}
	out := make([]*commonpb.KeyValue, 0, len(kvs))
	for _, kv := range kvs {
		out = append(out, &commonpb.KeyValue{Key: string(kv.Key), Value: anyValue(kv.Value)})
	}
	return out
}

// anyValue maps one attribute value of any type; slices become an
// ArrayValue, maps a KeyValueList, an empty value an empty AnyValue.
func anyValue(v attribute.Value) *commonpb.AnyValue {
	av := &commonpb.AnyValue{}
	switch v.Type() {
	case attribute.BOOL:
		av.Value = &commonpb.AnyValue_BoolValue{BoolValue: v.AsBool()}
	case attribute.INT64:
		av.Value = &commonpb.AnyValue_IntValue{IntValue: v.AsInt64()}
	case attribute.FLOAT64:
		av.Value = &commonpb.AnyValue_DoubleValue{DoubleValue: v.AsFloat64()}
	case attribute.STRING:
		av.Value = &commonpb.AnyValue_StringValue{StringValue: v.AsString()}
	case attribute.BYTESLICE:
		av.Value = &commonpb.AnyValue_BytesValue{BytesValue: v.AsByteSlice()}
	case attribute.BOOLSLICE:
		av.Value = arrayOf(v.AsBoolSlice(), attribute.BoolValue)
	case attribute.INT64SLICE:
		av.Value = arrayOf(v.AsInt64Slice(), attribute.Int64Value)
	case attribute.FLOAT64SLICE:
		av.Value = arrayOf(v.AsFloat64Slice(), attribute.Float64Value)
	case attribute.STRINGSLICE:
		av.Value = arrayOf(v.AsStringSlice(), attribute.StringValue)
	case attribute.SLICE:
		av.Value = arrayOf(v.AsSlice(), func(x attribute.Value) attribute.Value { return x })
	case attribute.MAP:
		av.Value = &commonpb.AnyValue_KvlistValue{KvlistValue: &commonpb.KeyValueList{Values: keyValues(v.AsMap())}}
	}
	return av
}

// arrayOf maps a slice attribute to an ArrayValue, element by element.
func arrayOf[T any](xs []T, value func(T) attribute.Value) *commonpb.AnyValue_ArrayValue {
	arr := &commonpb.ArrayValue{Values: make([]*commonpb.AnyValue, 0, len(xs))}
	for _, x := range xs {
		arr.Values = append(arr.Values, anyValue(value(x)))
	}
	return &commonpb.AnyValue_ArrayValue{ArrayValue: arr}
}

// unixNano is t in nanoseconds since the epoch; 0 for the zero time or
// anything before 1970.
func unixNano(t time.Time) uint64 {
	if t.IsZero() || t.Before(time.Unix(0, 0)) {
		return 0
	}
	return uint64(t.UnixNano())
}

// count32 clamps a count to a uint32.
func count32(n int) uint32 {
	return uint32(min(max(n, 0), math.MaxUint32))
}
