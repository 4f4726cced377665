package telemetry

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	resourcepb "go.opentelemetry.io/proto/otlp/resource/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/testing/protocmp"
)

// otlpRequest is what the fake collector saw of one request.
type otlpRequest struct {
	Method, Path                            string
	ContentType, ContentEncoding, UserAgent string
	XTest                                   string
	Body                                    []byte // decompressed
}

// reply is one scripted answer of the fake collector.
type reply struct {
	status     int
	retryAfter string
	body       string
}

// otlpCollector is a fake OTLP/HTTP collector: it records requests and
// answers from a script (200 once the script is used up, or the last
// entry forever when repeat is set).
type otlpCollector struct {
	mu      sync.Mutex
	reqs    []otlpRequest
	script  []reply
	repeat  bool
	decodeT *testing.T
}

// ServeHTTP records the request, its body ungzipped, and sends the next scripted reply.
func (c *otlpCollector) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(r.Body)
	body := raw
	if r.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(bytes.NewReader(raw))
		if err == nil {
			body, err = io.ReadAll(zr)
		}
		if err != nil {
			c.decodeT.Errorf("gzip body: %v", err)
		}
	}
	c.mu.Lock()
	c.reqs = append(c.reqs, otlpRequest{r.Method, r.URL.Path, r.Header.Get("Content-Type"),
		r.Header.Get("Content-Encoding"), r.Header.Get("User-Agent"), r.Header.Get("X-Test"), body})
	rep := reply{status: http.StatusOK}
	if len(c.script) > 0 {
		rep = c.script[0]
		if len(c.script) > 1 || !c.repeat {
			c.script = c.script[1:]
		}
	}
	c.mu.Unlock()
	if rep.retryAfter != "" {
		w.Header().Set("Retry-After", rep.retryAfter)
	}
	w.WriteHeader(rep.status)
	_, _ = io.WriteString(w, rep.body)
}

// requests returns what the collector has received so far.
func (c *otlpCollector) requests() []otlpRequest {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]otlpRequest(nil), c.reqs...)
}

// decodeProtoRequest reads an ExportTraceServiceRequest without the
// collector package: field 1, repeated, each a ResourceSpans.
func decodeProtoRequest(t *testing.T, b []byte) []*tracepb.ResourceSpans {
	t.Helper()
	var out []*tracepb.ResourceSpans
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 || num != 1 || typ != protowire.BytesType {
			t.Fatalf("request: tag %d type %d (n %d), want field 1 bytes", num, typ, n)
		}
		b = b[n:]
		v, n := protowire.ConsumeBytes(b)
		if n < 0 {
			t.Fatalf("request: bad length: %v", protowire.ParseError(n))
		}
		b = b[n:]
		rs := &tracepb.ResourceSpans{}
		if err := proto.Unmarshal(v, rs); err != nil {
			t.Fatal(err)
		}
		out = append(out, rs)
	}
	return out
}

var (
	testTraceID  = trace.TraceID{0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f, 0xf0}
	testSpanID   = trace.SpanID{0xa1, 0xa2, 0xa3, 0xa4, 0xa5, 0xa6, 0xa7, 0xa8}
	testParentID = trace.SpanID{0xb1, 0xb2, 0xb3, 0xb4, 0xb5, 0xb6, 0xb7, 0xb8}
	testLinkTID  = trace.TraceID{0xc0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x0c}
	testLinkSID  = trace.SpanID{0xd0, 0, 0, 0, 0, 0, 0, 0x0d}
	testT0       = time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
)

// testSpans returns two spans of one resource in two scopes: a server
// span under a remote parent with every attribute type, an event, a link
// and an error status; and a root span with an Ok status.
func testSpans(t *testing.T) []sdktrace.ReadOnlySpan {
	t.Helper()
	ts, err := trace.ParseTraceState("vendor=v1")
	if err != nil {
		t.Fatal(err)
	}
	res := resource.NewWithAttributes("https://opentelemetry.io/schemas/1.30.0", attribute.String("service.name", "rein"))
	scope := instrumentation.Scope{Name: "rein", Version: "1.2.3", SchemaURL: "https://example.com/scope",
		Attributes: attribute.NewSet(attribute.String("scope.attr", "x"))}
	sc := trace.NewSpanContext(trace.SpanContextConfig{TraceID: testTraceID, SpanID: testSpanID,
		TraceFlags: trace.FlagsSampled, TraceState: ts})
	parent := trace.NewSpanContext(trace.SpanContextConfig{TraceID: testTraceID, SpanID: testParentID,
		TraceFlags: trace.FlagsSampled, Remote: true})
	link := trace.NewSpanContext(trace.SpanContextConfig{TraceID: testLinkTID, SpanID: testLinkSID,
		TraceState: ts, Remote: true})
	server := tracetest.SpanStub{
		Name: "serve", SpanContext: sc, Parent: parent, SpanKind: trace.SpanKindServer,
		StartTime: testT0, EndTime: testT0.Add(1500 * time.Millisecond),
		Attributes: []attribute.KeyValue{
			attribute.Bool("b", false),
			attribute.Int64("i", -7),
			attribute.Float64("f", 1.5),
			attribute.String("s", "str"),
			attribute.BoolSlice("bs", []bool{true, false}),
			attribute.Int64Slice("is", []int64{1, 1 << 40}),
			attribute.Float64Slice("fs", []float64{0.25}),
			attribute.StringSlice("ss", []string{"a", "b"}),
		},
		DroppedAttributes: 2,
		Events: []sdktrace.Event{{Name: "retry", Time: testT0.Add(time.Second),
			Attributes: []attribute.KeyValue{attribute.Int("attempt", 2)}, DroppedAttributeCount: 1}},
		DroppedEvents: 3,
		Links: []sdktrace.Link{{SpanContext: link, Attributes: []attribute.KeyValue{attribute.String("why", "cause")},
			DroppedAttributeCount: 4}},
		DroppedLinks:         5,
		Status:               sdktrace.Status{Code: codes.Error, Description: "boom"},
		Resource:             res,
		InstrumentationScope: scope,
	}
	root := tracetest.SpanStub{
		Name: "root", SpanContext: trace.NewSpanContext(trace.SpanContextConfig{TraceID: testLinkTID, SpanID: testParentID}),
		StartTime: testT0, EndTime: testT0.Add(time.Millisecond),
		Status:   sdktrace.Status{Code: codes.Ok, Description: "dropped with Ok"},
		Resource: res, InstrumentationScope: instrumentation.Scope{Name: "other"},
	}
	return tracetest.SpanStubs{server, root}.Snapshots()
}

// Shorthands for the expected messages.
func pbStr(k, v string) *commonpb.KeyValue {
	return &commonpb.KeyValue{Key: k, Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: v}}}
}

// pbArr is an array value.
func pbArr(vs ...*commonpb.AnyValue) *commonpb.AnyValue {
	return &commonpb.AnyValue{Value: &commonpb.AnyValue_ArrayValue{ArrayValue: &commonpb.ArrayValue{Values: vs}}}
}

// pbBool is a bool value.
func pbBool(b bool) *commonpb.AnyValue {
	return &commonpb.AnyValue{Value: &commonpb.AnyValue_BoolValue{BoolValue: b}}
}

// pbInt is an int value.
func pbInt(i int64) *commonpb.AnyValue {
	return &commonpb.AnyValue{Value: &commonpb.AnyValue_IntValue{IntValue: i}}
}

// pbDouble is a double value.
func pbDouble(f float64) *commonpb.AnyValue {
	return &commonpb.AnyValue{Value: &commonpb.AnyValue_DoubleValue{DoubleValue: f}}
}

// pbString is a string value.
func pbString(s string) *commonpb.AnyValue {
	return &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: s}}
}

// wantResourceSpans is testSpans as OTLP, written out by hand.
func wantResourceSpans() []*tracepb.ResourceSpans {
	nanos := func(d time.Duration) uint64 { return uint64(testT0.Add(d).UnixNano()) }
	return []*tracepb.ResourceSpans{{
		Resource:  &resourcepb.Resource{Attributes: []*commonpb.KeyValue{pbStr("service.name", "rein")}},
		SchemaUrl: "https://opentelemetry.io/schemas/1.30.0",
		ScopeSpans: []*tracepb.ScopeSpans{{
			Scope: &commonpb.InstrumentationScope{Name: "rein", Version: "1.2.3",
				Attributes: []*commonpb.KeyValue{pbStr("scope.attr", "x")}},
			SchemaUrl: "https://example.com/scope",
			Spans: []*tracepb.Span{{
				TraceId: testTraceID[:], SpanId: testSpanID[:], TraceState: "vendor=v1", ParentSpanId: testParentID[:],
				Flags: 0x01 | 0x100 | 0x200, Name: "serve", Kind: tracepb.Span_SPAN_KIND_SERVER,
				StartTimeUnixNano: nanos(0), EndTimeUnixNano: nanos(1500 * time.Millisecond),
				Attributes: []*commonpb.KeyValue{
					{Key: "b", Value: pbBool(false)},
					{Key: "i", Value: pbInt(-7)},
					{Key: "f", Value: pbDouble(1.5)},
					{Key: "s", Value: pbString("str")},
					{Key: "bs", Value: pbArr(pbBool(true), pbBool(false))},
					{Key: "is", Value: pbArr(pbInt(1), pbInt(1<<40))},
					{Key: "fs", Value: pbArr(pbDouble(0.25))},
					{Key: "ss", Value: pbArr(pbString("a"), pbString("b"))},
				},
				DroppedAttributesCount: 2,
				Events: []*tracepb.Span_Event{{TimeUnixNano: nanos(time.Second), Name: "retry",
					Attributes: []*commonpb.KeyValue{{Key: "attempt", Value: pbInt(2)}}, DroppedAttributesCount: 1}},
				DroppedEventsCount: 3,
				Links: []*tracepb.Span_Link{{TraceId: testLinkTID[:], SpanId: testLinkSID[:], TraceState: "vendor=v1",
					Attributes: []*commonpb.KeyValue{pbStr("why", "cause")}, DroppedAttributesCount: 4, Flags: 0x300}},
				DroppedLinksCount: 5,
				Status:            &tracepb.Status{Code: tracepb.Status_STATUS_CODE_ERROR, Message: "boom"},
			}},
		}, {
			Scope: &commonpb.InstrumentationScope{Name: "other"},
			Spans: []*tracepb.Span{{
				TraceId: testLinkTID[:], SpanId: testParentID[:], Flags: 0x100, Name: "root",
				StartTimeUnixNano: nanos(0), EndTimeUnixNano: nanos(time.Millisecond),
				Status: &tracepb.Status{Code: tracepb.Status_STATUS_CODE_OK},
			}},
		}},
	}}
}

// wantJSON is testSpans in OTLP/JSON, written out by hand: hex ids,
// 64-bit integers as strings, enums as numbers, camelCase names.
const wantJSON = `{"resourceSpans": [{
  "resource": {"attributes": [{"key": "service.name", "value": {"stringValue": "rein"}}]},
  "schemaUrl": "https://opentelemetry.io/schemas/1.30.0",
  "scopeSpans": [{
    "scope": {"name": "rein", "version": "1.2.3", "attributes": [{"key": "scope.attr", "value": {"stringValue": "x"}}]},
    "schemaUrl": "https://example.com/scope",
    "spans": [{
      "traceId": "0102030405060708090a0b0c0d0e0ff0", "spanId": "a1a2a3a4a5a6a7a8", "traceState": "vendor=v1",
      "parentSpanId": "b1b2b3b4b5b6b7b8", "flags": 769, "name": "serve", "kind": 2,
      "startTimeUnixNano": "1777636800000000000", "endTimeUnixNano": "1777636801500000000",
      "attributes": [
        {"key": "b", "value": {"boolValue": false}},
        {"key": "i", "value": {"intValue": "-7"}},
        {"key": "f", "value": {"doubleValue": 1.5}},
        {"key": "s", "value": {"stringValue": "str"}},
        {"key": "bs", "value": {"arrayValue": {"values": [{"boolValue": true}, {"boolValue": false}]}}},
        {"key": "is", "value": {"arrayValue": {"values": [{"intValue": "1"}, {"intValue": "1099511627776"}]}}},
        {"key": "fs", "value": {"arrayValue": {"values": [{"doubleValue": 0.25}]}}},
        {"key": "ss", "value": {"arrayValue": {"values": [{"stringValue": "a"}, {"stringValue": "b"}]}}}
      ],
      "droppedAttributesCount": 2,
      "events": [{"timeUnixNano": "1777636801000000000", "name": "retry",
        "attributes": [{"key": "attempt", "value": {"intValue": "2"}}], "droppedAttributesCount": 1}],
      "droppedEventsCount": 3,
      "links": [{"traceId": "c000000000000000000000000000000c", "spanId": "d00000000000000d", "traceState": "vendor=v1",
        "attributes": [{"key": "why", "value": {"stringValue": "cause"}}], "droppedAttributesCount": 4, "flags": 768}],
      "droppedLinksCount": 5,
      "status": {"code": 2, "message": "boom"}
    }]
  }, {
    "scope": {"name": "other"},
    "spans": [{
      "traceId": "c000000000000000000000000000000c", "spanId": "b1b2b3b4b5b6b7b8", "flags": 256, "name": "root",
      "startTimeUnixNano": "1777636800000000000", "endTimeUnixNano": "1777636800001000000",
      "status": {"code": 1}
    }]
  }]
}]}`

// startCollector serves c on 127.0.0.1 and returns an exporter config
// pointing at it.
func startCollector(t *testing.T, c *otlpCollector) otlpConfig {
	t.Helper()
	c.decodeT = t
	srv := httptest.NewServer(c)
	t.Cleanup(srv.Close)
	return otlpConfig{URL: srv.URL + "/v1/traces", UserAgent: "rein/test"}
}

// TestOTLPExportEncodings checks every mapped field, the headers and
// the content types of both encodings, with and without gzip.
func TestOTLPExportEncodings(t *testing.T) {
	tests := []struct {
		name        string
		json, gzip  bool
		contentType string
	}{
		{"protobuf", false, false, "application/x-protobuf"},
		{"protobuf gzip", false, true, "application/x-protobuf"},
		{"json", true, false, "application/json"},
		{"json gzip", true, true, "application/json"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			col := &otlpCollector{}
			cfg := startCollector(t, col)
			cfg.JSON, cfg.Gzip = tt.json, tt.gzip
			cfg.Headers = map[string]string{"X-Test": "a b"}
			exp := newOTLPExporter(cfg)
			if err := exp.ExportSpans(context.Background(), testSpans(t)); err != nil {
				t.Fatal(err)
			}
			reqs := col.requests()
			if len(reqs) != 1 {
				t.Fatalf("%d requests, want 1", len(reqs))
			}
			r := reqs[0]
			wantEnc := ""
			if tt.gzip {
				wantEnc = "gzip"
			}
			if r.Method != http.MethodPost || r.Path != "/v1/traces" || r.ContentType != tt.contentType ||
				r.ContentEncoding != wantEnc || r.UserAgent != "rein/test" || r.XTest != "a b" {
				t.Errorf("request %s %s type %q encoding %q agent %q x-test %q, want POST /v1/traces type %q encoding %q agent rein/test x-test \"a b\"",
					r.Method, r.Path, r.ContentType, r.ContentEncoding, r.UserAgent, r.XTest, tt.contentType, wantEnc)
			}
			if tt.json {
				var got, want any
				if err := json.Unmarshal(r.Body, &got); err != nil {
					t.Fatalf("body is not JSON: %v\n%s", err, r.Body)
				}
				if err := json.Unmarshal([]byte(wantJSON), &want); err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("OTLP/JSON body (-want +got):\n%s", diff)
				}
				return
			}
			if diff := cmp.Diff(wantResourceSpans(), decodeProtoRequest(t, r.Body), protocmp.Transform()); diff != "" {
				t.Errorf("protobuf body (-want +got):\n%s", diff)
			}
		})
	}
}

// TestOTLPJSONValues covers the value forms protobuf JSON gives special
// treatment: zero values in a oneof, bytes, non-finite doubles, maps.
func TestOTLPJSONValues(t *testing.T) {
	kvs := keyValues([]attribute.KeyValue{
		attribute.String("empty", ""),
		attribute.Int64("zero", 0),
		attribute.Float64("nan", nanValue()),
		attribute.Float64("big", 1e21),
		attribute.StringSlice("none", nil),
	})
	b, err := json.Marshal(jsonKVs(kvs))
	if err != nil {
		t.Fatal(err)
	}
	want := `[{"key":"empty","value":{"stringValue":""}},{"key":"zero","value":{"intValue":"0"}},` +
		`{"key":"nan","value":{"doubleValue":"NaN"}},{"key":"big","value":{"doubleValue":1e+21}},` +
		`{"key":"none","value":{"arrayValue":{}}}]`
	if string(b) != want {
		t.Errorf("got  %s\nwant %s", b, want)
	}
}

// nanValue is a NaN the compiler does not fold.
func nanValue() float64 {
	zero := 0.0
	return zero / zero
}

// TestOTLPStatusMapping checks otel Ok→1, Error→2 and that only an
// error keeps its description.
func TestOTLPStatusMapping(t *testing.T) {
	tests := []struct {
		in   sdktrace.Status
		want *tracepb.Status
	}{
		{sdktrace.Status{Code: codes.Unset, Description: "x"}, &tracepb.Status{Code: tracepb.Status_STATUS_CODE_UNSET}},
		{sdktrace.Status{Code: codes.Ok, Description: "x"}, &tracepb.Status{Code: 1}},
		{sdktrace.Status{Code: codes.Error, Description: "x"}, &tracepb.Status{Code: 2, Message: "x"}},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, statusPB(tt.in), protocmp.Transform()); diff != "" {
			t.Errorf("status %v (-want +got):\n%s", tt.in, diff)
		}
	}
}

// TestOTLPRetry covers which answers are retried, Retry-After, and the
// export timeout bounding the retries.
func TestOTLPRetry(t *testing.T) {
	tests := []struct {
		name     string
		script   []reply
		repeat   bool
		timeout  time.Duration
		wantReqs int    // exact; 0 means "at least one"
		wantErr  string // "" means success
	}{
		{name: "503 then 200", script: []reply{{status: 503, retryAfter: "0"}, {status: 200}}, wantReqs: 2},
		{name: "429 then 200", script: []reply{{status: 429, retryAfter: "0"}, {status: 200}}, wantReqs: 2},
		{name: "400 not retried", script: []reply{{status: 400, body: "bad span " + strings.Repeat("x", 500)}},
			wantReqs: 1, wantErr: "400"},
		{name: "500 not retried", script: []reply{{status: 500}}, wantReqs: 1, wantErr: "500"},
		{name: "always 503", script: []reply{{status: 503}}, repeat: true, timeout: 300 * time.Millisecond,
			wantErr: "503"},
		{name: "Retry-After past the deadline", script: []reply{{status: 503, retryAfter: "60"}},
			timeout: 300 * time.Millisecond, wantReqs: 1, wantErr: "503"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			col := &otlpCollector{script: tt.script, repeat: tt.repeat}
			cfg := startCollector(t, col)
			cfg.Timeout = tt.timeout
			cfg.Headers = map[string]string{"Authorization": "Bearer sk-secret-value"}
			start := time.Now()
			err := newOTLPExporter(cfg).ExportSpans(context.Background(), testSpans(t))
			if elapsed := time.Since(start); elapsed > time.Second+tt.timeout {
				t.Errorf("export took %v", elapsed)
			}
			n := len(col.requests())
			if (tt.wantReqs > 0 && n != tt.wantReqs) || n == 0 {
				t.Errorf("%d requests, want %d", n, tt.wantReqs)
			}
			switch {
			case tt.wantErr == "" && err != nil:
				t.Errorf("error %v, want success", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Errorf("error %v, want one mentioning %s", err, tt.wantErr)
			case err != nil && (strings.Contains(err.Error(), "sk-secret") || len(err.Error()) > 400):
				t.Errorf("error %q leaks a header or the whole body", err)
			}
		})
	}
}

// TestOTLPRetryTransport covers a collector that cannot be reached: the
// export retries until its timeout, then fails.
func TestOTLPRetryTransport(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	start := time.Now()
	err := newOTLPExporter(otlpConfig{URL: url, Timeout: 300 * time.Millisecond}).
		ExportSpans(context.Background(), testSpans(t))
	if err == nil {
		t.Fatal("export to a closed port succeeded")
	}
	if elapsed := time.Since(start); elapsed > 1300*time.Millisecond {
		t.Errorf("export took %v", elapsed)
	}
}

// TestRetryAfter covers both forms of the header.
func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		h    string
		want time.Duration
	}{
		{"", -1},
		{"0", 0},
		{" 3 ", 3 * time.Second},
		{"-1", -1},
		{"soon", -1},
		{now.Add(90 * time.Second).Format(http.TimeFormat), 90 * time.Second},
		{now.Add(-time.Hour).Format(http.TimeFormat), 0},
	}
	for _, tt := range tests {
		if got := retryAfter(tt.h, now); got != tt.want {
			t.Errorf("retryAfter(%q) = %v, want %v", tt.h, got, tt.want)
		}
	}
}

// TestBackoff checks the waits stay within their bounds.
func TestBackoff(t *testing.T) {
	for attempt := range 20 {
		d := backoff(attempt)
		base := min(otlpBackoffStart<<min(attempt, 10), otlpBackoffMax)
		if d < base/2 || d > otlpBackoffMax {
			t.Errorf("backoff(%d) = %v, want within [%v, %v]", attempt, d, base/2, otlpBackoffMax)
		}
	}
}

// TestOTLPShutdownAndEmpty checks that an empty export and one after
// Shutdown send nothing, and that Shutdown is idempotent.
func TestOTLPShutdownAndEmpty(t *testing.T) {
	col := &otlpCollector{}
	exp := newOTLPExporter(startCollector(t, col))
	ctx := context.Background()
	if err := exp.ExportSpans(ctx, nil); err != nil {
		t.Errorf("empty export: %v", err)
	}
	if err := exp.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if err := exp.Shutdown(ctx); err != nil {
		t.Errorf("second shutdown: %v", err)
	}
	if err := exp.ExportSpans(ctx, testSpans(t)); err == nil {
		t.Error("export after shutdown succeeded")
	}
	if n := len(col.requests()); n != 0 {
		t.Errorf("%d requests, want none", n)
	}
}

// writePEM writes blocks to a file in dir.
func writePEM(t *testing.T, dir, name string, blocks ...*pem.Block) string {
	t.Helper()
	var buf bytes.Buffer
	for _, b := range blocks {
		if err := pem.Encode(&buf, b); err != nil {
			t.Fatal(err)
		}
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestOTLPCertificateConfig checks that unreadable or incomplete
// certificate settings are errors naming the variable.
func TestOTLPCertificateConfig(t *testing.T) {
	dir := t.TempDir()
	garbage := filepath.Join(dir, "garbage.pem")
	if err := os.WriteFile(garbage, []byte("not a certificate"), 0o600); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing.pem")
	tests := []struct {
		env      map[string]string
		variable string
	}{
		{map[string]string{"OTEL_EXPORTER_OTLP_CERTIFICATE": missing}, "OTEL_EXPORTER_OTLP_CERTIFICATE"},
		{map[string]string{"OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE": garbage}, "OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE"},
		{map[string]string{"OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE": garbage, "OTEL_EXPORTER_OTLP_CLIENT_KEY": missing},
			"OTEL_EXPORTER_OTLP_CLIENT_KEY"},
		{map[string]string{"OTEL_EXPORTER_OTLP_TRACES_CLIENT_CERTIFICATE": garbage}, "OTEL_EXPORTER_OTLP_TRACES_CLIENT_CERTIFICATE"},
		{map[string]string{"OTEL_EXPORTER_OTLP_CLIENT_KEY": garbage}, "OTEL_EXPORTER_OTLP_CLIENT_KEY"},
	}
	for _, tt := range tests {
		_, err := exporterOptions(env(tt.env), "https://127.0.0.1:1/v1/traces")
		if !errors.Is(err, ErrTracingConfig) || !strings.Contains(err.Error(), tt.variable) {
			t.Errorf("%v: error %v, want ErrTracingConfig naming %s", tt.env, err, tt.variable)
		}
	}
}

// TestOTLPTLS exports to an https collector trusted through
// OTEL_EXPORTER_OTLP_CERTIFICATE and requiring a client certificate given
// through _CLIENT_CERTIFICATE and _CLIENT_KEY.
func TestOTLPTLS(t *testing.T) {
	var mu sync.Mutex
	var clientCerts int
	col := &otlpCollector{decodeT: t}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		clientCerts = len(r.TLS.PeerCertificates)
		mu.Unlock()
		col.ServeHTTP(w, r)
	}))
	srv.TLS = &tls.Config{ClientAuth: tls.RequireAnyClientCert}
	srv.StartTLS()
	defer srv.Close()

	dir := t.TempDir()
	serverCert := srv.TLS.Certificates[0]
	ca := writePEM(t, dir, "ca.pem", &pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	// The server's own key pair doubles as the client certificate.
	key, err := x509.MarshalPKCS8PrivateKey(serverCert.PrivateKey)
	if err != nil {
		t.Fatal(err)
	}
	clientCert := writePEM(t, dir, "client.pem", &pem.Block{Type: "CERTIFICATE", Bytes: serverCert.Certificate[0]})
	clientKey := writePEM(t, dir, "client-key.pem", &pem.Block{Type: "PRIVATE KEY", Bytes: key})

	ctx := context.Background()
	cfg, err := exporterOptions(env(map[string]string{
		"OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE": ca,
		"OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE": clientCert,
		"OTEL_EXPORTER_OTLP_CLIENT_KEY":         clientKey,
	}), srv.URL+"/v1/traces")
	if err != nil {
		t.Fatal(err)
	}
	if err := newOTLPExporter(cfg).ExportSpans(ctx, testSpans(t)); err != nil {
		t.Fatalf("export over TLS: %v", err)
	}
	mu.Lock()
	if clientCerts != 1 {
		t.Errorf("collector saw %d client certificates, want 1", clientCerts)
	}
	mu.Unlock()
	if n := len(col.requests()); n != 1 {
		t.Errorf("%d requests, want 1", n)
	}

	// Without the CA the server is not trusted, and that is not retried.
	cfg.TLS.RootCAs = nil
	start := time.Now()
	if err := newOTLPExporter(cfg).ExportSpans(ctx, testSpans(t)); err == nil {
		t.Error("export to an untrusted server succeeded")
	}
	if elapsed := time.Since(start); elapsed > 2*time.Second {
		t.Errorf("the untrusted export took %v: a certificate error was retried", elapsed)
	}
	if n := len(col.requests()); n != 1 {
		t.Errorf("%d requests after the untrusted export, want still 1", n)
	}
}
