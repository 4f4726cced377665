package telemetry

import (
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"math"
	"strconv"

	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
)

// The types below are the OTLP/JSON form of an ExportTraceServiceRequest
// (https://opentelemetry.io/docs/specs/otlp/#json-protobuf-encoding):
// lowerCamelCase names, trace and span ids as lowercase hex, enums as
// numbers, 64-bit integers as decimal strings, default values left out.
// protojson cannot be used: it writes the ids in base64.

// jsonTraces is the request: its resourceSpans.
type jsonTraces struct {
	ResourceSpans []jsonResourceSpans `json:"resourceSpans"`
}

// jsonResourceSpans is ResourceSpans.
type jsonResourceSpans struct {
	Resource   jsonResource     `json:"resource"`
	ScopeSpans []jsonScopeSpans `json:"scopeSpans,omitempty"`
	SchemaURL  string           `json:"schemaUrl,omitempty"`
}

// jsonResource is Resource.
type jsonResource struct {
	Attributes             []jsonKeyValue `json:"attributes,omitempty"`
	DroppedAttributesCount uint32         `json:"droppedAttributesCount,omitempty"`
}

// jsonScopeSpans is ScopeSpans.
type jsonScopeSpans struct {
	Scope     jsonScope  `json:"scope"`
	Spans     []jsonSpan `json:"spans,omitempty"`
	SchemaURL string     `json:"schemaUrl,omitempty"`
}

// jsonScope is InstrumentationScope.
type jsonScope struct {
	Name                   string         `json:"name,omitempty"`
	Version                string         `json:"version,omitempty"`
	Attributes             []jsonKeyValue `json:"attributes,omitempty"`
	DroppedAttributesCount uint32         `json:"droppedAttributesCount,omitempty"`
}

// jsonSpan is Span.
type jsonSpan struct {
	TraceID                string         `json:"traceId,omitempty"`
	SpanID                 string         `json:"spanId,omitempty"`
	TraceState             string         `json:"traceState,omitempty"`
	ParentSpanID           string         `json:"parentSpanId,omitempty"`
	Flags                  uint32         `json:"flags,omitempty"`
	Name                   string         `json:"name,omitempty"`
	Kind                   int32          `json:"kind,omitempty"`
	StartTimeUnixNano      string         `json:"startTimeUnixNano,omitempty"`
	EndTimeUnixNano        string         `json:"endTimeUnixNano,omitempty"`
	Attributes             []jsonKeyValue `json:"attributes,omitempty"`
	DroppedAttributesCount uint32         `json:"droppedAttributesCount,omitempty"`
	Events                 []jsonEvent    `json:"events,omitempty"`
	DroppedEventsCount     uint32         `json:"droppedEventsCount,omitempty"`
	Links                  []jsonLink     `json:"links,omitempty"`
	DroppedLinksCount      uint32         `json:"droppedLinksCount,omitempty"`
	Status                 *jsonStatus    `json:"status,omitempty"`
}

// jsonEvent is Span.Event.
type jsonEvent struct {
	TimeUnixNano           string         `json:"timeUnixNano,omitempty"`
	Name                   string         `json:"name,omitempty"`
	Attributes             []jsonKeyValue `json:"attributes,omitempty"`
	DroppedAttributesCount uint32         `json:"droppedAttributesCount,omitempty"`
}

// jsonLink is Span.Link.
type jsonLink struct {
	TraceID                string         `json:"traceId,omitempty"`
	SpanID                 string         `json:"spanId,omitempty"`
	TraceState             string         `json:"traceState,omitempty"`
	Attributes             []jsonKeyValue `json:"attributes,omitempty"`
	DroppedAttributesCount uint32         `json:"droppedAttributesCount,omitempty"`
	Flags                  uint32         `json:"flags,omitempty"`
}

// jsonStatus is Status.
type jsonStatus struct {
	Message string `json:"message,omitempty"`
	Code    int32  `json:"code,omitempty"`
}

// jsonKeyValue is KeyValue.
type jsonKeyValue struct {
	Key   string       `json:"key"`
	Value jsonAnyValue `json:"value"`
}

// jsonAnyValue is AnyValue: at most one field is set. doubleValue is raw
// because NaN and the infinities are written as strings.
type jsonAnyValue struct {
	StringValue *string         `json:"stringValue,omitempty"`
	BoolValue   *bool           `json:"boolValue,omitempty"`
	IntValue    string          `json:"intValue,omitempty"`
	DoubleValue json.RawMessage `json:"doubleValue,omitempty"`
	ArrayValue  *jsonValues     `json:"arrayValue,omitempty"`
	KvlistValue *jsonKeyValues  `json:"kvlistValue,omitempty"`
	BytesValue  *string         `json:"bytesValue,omitempty"`
}

// jsonValues is ArrayValue.
type jsonValues struct {
	Values []jsonAnyValue `json:"values,omitempty"`
}

// jsonKeyValues is KeyValueList.
type jsonKeyValues struct {
	Values []jsonKeyValue `json:"values,omitempty"`
}

// marshalTracesJSON writes rss as an OTLP/JSON ExportTraceServiceRequest.
func marshalTracesJSON(rss []*tracepb.ResourceSpans) ([]byte, error) {
	req := jsonTraces{ResourceSpans: make([]jsonResourceSpans, 0, len(rss))}
	for _, rs := range rss {
		jrs := jsonResourceSpans{SchemaURL: rs.GetSchemaUrl()}
		jrs.Resource.Attributes = jsonKVs(rs.GetResource().GetAttributes())
		jrs.Resource.DroppedAttributesCount = rs.GetResource().GetDroppedAttributesCount()
		for _, ss := range rs.GetScopeSpans() {
			sc := ss.GetScope()
			jss := jsonScopeSpans{SchemaURL: ss.GetSchemaUrl(), Scope: jsonScope{
				Name: sc.GetName(), Version: sc.GetVersion(), Attributes: jsonKVs(sc.GetAttributes()),
				DroppedAttributesCount: sc.GetDroppedAttributesCount(),
			}}
			for _, s := range ss.GetSpans() {
				jss.Spans = append(jss.Spans, jsonSpanOf(s))
			}
			jrs.ScopeSpans = append(jrs.ScopeSpans, jss)
		}
		req.ResourceSpans = append(req.ResourceSpans, jrs)
	}
	return json.Marshal(req)
}

// jsonSpanOf converts one span.
func jsonSpanOf(s *tracepb.Span) jsonSpan {
	js := jsonSpan{
		TraceID:                hex.EncodeToString(s.GetTraceId()),
		SpanID:                 hex.EncodeToString(s.GetSpanId()),
		TraceState:             s.GetTraceState(),
		ParentSpanID:           hex.EncodeToString(s.GetParentSpanId()),
		Flags:                  s.GetFlags(),
		Name:                   s.GetName(),
		Kind:                   int32(s.GetKind()),
		StartTimeUnixNano:      jsonUint64(s.GetStartTimeUnixNano()),
		EndTimeUnixNano:        jsonUint64(s.GetEndTimeUnixNano()),
		Attributes:             jsonKVs(s.GetAttributes()),
		DroppedAttributesCount: s.GetDroppedAttributesCount(),
		DroppedEventsCount:     s.GetDroppedEventsCount(),
		DroppedLinksCount:      s.GetDroppedLinksCount(),
	}
	if st := s.GetStatus(); st != nil {
		js.Status = &jsonStatus{Message: st.GetMessage(), Code: int32(st.GetCode())}
	}
	for _, ev := range s.GetEvents() {
		js.Events = append(js.Events, jsonEvent{
			TimeUnixNano: jsonUint64(ev.GetTimeUnixNano()), Name: ev.GetName(),
			Attributes: jsonKVs(ev.GetAttributes()), DroppedAttributesCount: ev.GetDroppedAttributesCount(),
		})
	}
	for _, l := range s.GetLinks() {
		js.Links = append(js.Links, jsonLink{
			TraceID: hex.EncodeToString(l.GetTraceId()), SpanID: hex.EncodeToString(l.GetSpanId()),
			TraceState: l.GetTraceState(), Attributes: jsonKVs(l.GetAttributes()),
			DroppedAttributesCount: l.GetDroppedAttributesCount(), Flags: l.GetFlags(),
		})
	}
	return js
}

// jsonUint64 writes a 64-bit integer as OTLP/JSON wants it: a decimal
// string, "" (left out) for zero.
func jsonUint64(n uint64) string {
	if n == 0 {
		return ""
	}
	return strconv.FormatUint(n, 10)
}

// jsonKVs converts attributes.
func jsonKVs(kvs []*commonpb.KeyValue) []jsonKeyValue {
	if len(kvs) == 0 {
		return nil
	}
	out := make([]jsonKeyValue, 0, len(kvs))
	for _, kv := range kvs {
		out = append(out, jsonKeyValue{Key: kv.GetKey(), Value: jsonAny(kv.GetValue())})
	}
	return out
}

// jsonAny converts one value. Unlike the other fields, a oneof member is
// written even when it holds its type's zero value.
func jsonAny(v *commonpb.AnyValue) jsonAnyValue {
	var j jsonAnyValue
	switch x := v.GetValue().(type) {
	case *commonpb.AnyValue_StringValue:
		j.StringValue = &x.StringValue
	case *commonpb.AnyValue_BoolValue:
		j.BoolValue = &x.BoolValue
	case *commonpb.AnyValue_IntValue:
		j.IntValue = strconv.FormatInt(x.IntValue, 10)
	case *commonpb.AnyValue_DoubleValue:
		j.DoubleValue = jsonDouble(x.DoubleValue)
	case *commonpb.AnyValue_BytesValue:
		b64 := base64.StdEncoding.EncodeToString(x.BytesValue)
		j.BytesValue = &b64
	case *commonpb.AnyValue_ArrayValue:
		j.ArrayValue = &jsonValues{}
		for _, e := range x.ArrayValue.GetValues() {
			j.ArrayValue.Values = append(j.ArrayValue.Values, jsonAny(e))
		}
	case *commonpb.AnyValue_KvlistValue:
		j.KvlistValue = &jsonKeyValues{Values: jsonKVs(x.KvlistValue.GetValues())}
	}
	return j
}

// jsonDouble writes a float as proto3 JSON does: a number, or the strings
// "NaN", "Infinity" and "-Infinity".
func jsonDouble(f float64) json.RawMessage {
	switch {
	case math.IsNaN(f):
		return json.RawMessage(`"NaN"`)
	case math.IsInf(f, 1):
		return json.RawMessage(`"Infinity"`)
	case math.IsInf(f, -1):
		return json.RawMessage(`"-Infinity"`)
	}
	return json.RawMessage(strconv.FormatFloat(f, 'g', -1, 64))
}
