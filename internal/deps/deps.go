// Package deps pins, during the work of issue 10, the modules its new
// packages import, so go.mod stays complete while they are written. It is
// removed once those packages import them themselves.
package deps

import (
	_ "github.com/danielgtaylor/huma/v2"
	_ "github.com/danielgtaylor/huma/v2/adapters/humago"
	_ "github.com/danielgtaylor/huma/v2/humatest"
	_ "github.com/danielgtaylor/huma/v2/sse"
	_ "github.com/golang-jwt/jwt/v5"
	_ "github.com/prometheus/client_golang/prometheus"
	_ "github.com/prometheus/client_golang/prometheus/collectors"
	_ "github.com/prometheus/client_golang/prometheus/promhttp"
	_ "github.com/prometheus/client_golang/prometheus/testutil"
	_ "go.opentelemetry.io/otel"
	_ "go.opentelemetry.io/otel/attribute"
	_ "go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	_ "go.opentelemetry.io/otel/sdk/resource"
	_ "go.opentelemetry.io/otel/sdk/trace"
	_ "go.opentelemetry.io/otel/sdk/trace/tracetest"
	_ "go.opentelemetry.io/otel/semconv/v1.37.0"
	_ "go.opentelemetry.io/otel/trace"
	_ "go.opentelemetry.io/otel/trace/noop"
	_ "go.uber.org/goleak"
	_ "golang.org/x/time/rate"
	_ "modernc.org/sqlite"
)
