package telemetry

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// ErrTracingConfig reports OTEL_* settings that SetupTracing cannot follow.
var ErrTracingConfig = errors.New("telemetry: tracing configuration")

// SetupTracing returns the tracer provider rein's spans go to and the
// function that flushes and stops it (call it on shutdown, with a
// deadline).
//
// When OTEL_EXPORTER_OTLP_TRACES_ENDPOINT (used as is) or
// OTEL_EXPORTER_OTLP_ENDPOINT (a base URL; /v1/traces is appended) is set,
// spans are batched and exported over OTLP/HTTP. Settings are read through
// getenv (nil means os.Getenv), not the process environment, since rein
// scrubs that at start-up: the endpoints, OTEL_EXPORTER_OTLP_[TRACES_]HEADERS
// ("k=v,k2=v2", values URL-encoded), _TIMEOUT (milliseconds), _COMPRESSION
// ("gzip" or "none"), _PROTOCOL ("http/protobuf", the default, or
// "http/json"; "grpc" is refused), _CERTIFICATE (a PEM file of the CAs
// an https endpoint is checked against), _CLIENT_CERTIFICATE and
// _CLIENT_KEY (PEM files, for mutual TLS), OTEL_SERVICE_NAME (overrides
// service) and OTEL_RESOURCE_ATTRIBUTES. Spans are sent with User-Agent
// rein/<version> by rein's own exporter (no gRPC code linked). The sampler
// is left to the SDK, which reads its OTEL_* variables from the process
// environment.
//
// Otherwise — no endpoint, OTEL_SDK_DISABLED=true or
// OTEL_TRACES_EXPORTER=none — the provider is a no-op one: spans cost
// nothing and the shutdown function does nothing.
//
// The provider is not installed globally (otel.SetTracerProvider); the
// caller hands it to what traces. A configuration it cannot follow is an
// error wrapping [ErrTracingConfig] naming the variable.
func SetupTracing(ctx context.Context, getenv func(string) string, service, version string) (trace.TracerProvider, func(context.Context) error, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	noopShutdown := func(context.Context) error { return nil }
	if strings.EqualFold(strings.TrimSpace(getenv("OTEL_SDK_DISABLED")), "true") ||
		strings.EqualFold(strings.TrimSpace(getenv("OTEL_TRACES_EXPORTER")), "none") {
		return noop.NewTracerProvider(), noopShutdown, nil
	}
	endpoint, err := tracesEndpoint(getenv)
	if err != nil || endpoint == "" {
		return noop.NewTracerProvider(), noopShutdown, err
	}
	cfg, err := exporterOptions(getenv, endpoint)
	if err != nil {
		return noop.NewTracerProvider(), noopShutdown, err
	}
	cfg.UserAgent = "rein"
	if version != "" {
		cfg.UserAgent += "/" + version
	}
	res, err := tracingResource(ctx, getenv, service, version)
	if err != nil {
		return noop.NewTracerProvider(), noopShutdown, err
	}
	exp := newOTLPExporter(cfg)
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	return tp, tp.Shutdown, nil
}

// otlpEnv returns the signal-specific variable OTEL_EXPORTER_OTLP_TRACES_<name>
// when set, else OTEL_EXPORTER_OTLP_<name>, and which one it read.
func otlpEnv(getenv func(string) string, name string) (value, variable string) {
	for _, v := range []string{"OTEL_EXPORTER_OTLP_TRACES_" + name, "OTEL_EXPORTER_OTLP_" + name} {
		if s := strings.TrimSpace(getenv(v)); s != "" {
			return s, v
		}
	}
	return "", ""
}

// tracesEndpoint returns the full URL spans are posted to, "" when none is
// configured.
func tracesEndpoint(getenv func(string) string) (string, error) {
	raw, variable := otlpEnv(getenv, "ENDPOINT")
	if raw == "" {
		return "", nil
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("%w: %s=%q: want an http:// or https:// URL such as http://localhost:4318",
			ErrTracingConfig, variable, raw)
	}
	if variable == "OTEL_EXPORTER_OTLP_ENDPOINT" {
		u.Path = strings.TrimSuffix(u.Path, "/") + "/v1/traces"
	}
	return u.String(), nil
}

// exporterOptions turns the OTLP variables into the exporter's
// configuration.
func exporterOptions(getenv func(string) string, endpoint string) (otlpConfig, error) {
	cfg := otlpConfig{URL: endpoint}
	switch p, variable := otlpEnv(getenv, "PROTOCOL"); p {
	case "", "http/protobuf":
	case "http/json":
		cfg.JSON = true
	default:
		return cfg, fmt.Errorf("%w: %s=%q: rein exports over OTLP/HTTP; set http/protobuf (port 4318) or unset it",
			ErrTracingConfig, variable, p)
	}
	if h, variable := otlpEnv(getenv, "HEADERS"); h != "" {
		headers, err := parseKeyValues(h)
		if err == nil {
			err = checkHeaders(headers)
		}
		if err != nil {
			return cfg, fmt.Errorf("%w: %s: %w", ErrTracingConfig, variable, err)
		}
		cfg.Headers = headers
	}
	if t, variable := otlpEnv(getenv, "TIMEOUT"); t != "" {
		ms, err := strconv.Atoi(t)
		if err != nil || ms <= 0 {
			return cfg, fmt.Errorf("%w: %s=%q: want a positive number of milliseconds", ErrTracingConfig, variable, t)
		}
		cfg.Timeout = time.Duration(ms) * time.Millisecond
	}
	switch c, variable := otlpEnv(getenv, "COMPRESSION"); c {
	case "", "none":
	case "gzip":
		cfg.Gzip = true
	default:
		return cfg, fmt.Errorf("%w: %s=%q: want gzip or none", ErrTracingConfig, variable, c)
	}
	tlsCfg, err := exporterTLS(getenv)
	if err != nil {
		return cfg, err
	}
	cfg.TLS = tlsCfg
	return cfg, nil
}

// checkHeaders refuses header names and values net/http would refuse at
// send time, naming the key only: values hold credentials.
func checkHeaders(headers map[string]string) error {
	for k, v := range headers {
		if strings.ContainsFunc(k, func(r rune) bool {
			return r <= ' ' || r >= 0x7f || strings.ContainsRune(`"(),/:;<=>?@[\]{}`, r)
		}) {
			return fmt.Errorf("entry %q: not a valid header name", k+"=…")
		}
		if strings.ContainsFunc(v, func(r rune) bool { return (r < ' ' && r != '\t') || r == 0x7f }) {
			return fmt.Errorf("entry %q: the value holds a control character", k+"=…")
		}
	}
	return nil
}

// exporterTLS reads OTEL_EXPORTER_OTLP_[TRACES_]CERTIFICATE (CA pool) and
// _CLIENT_CERTIFICATE with _CLIENT_KEY (client certificate) through
// getenv; nil when none is set.
func exporterTLS(getenv func(string) string) (*tls.Config, error) {
	caFile, caVar := otlpEnv(getenv, "CERTIFICATE")
	certFile, certVar := otlpEnv(getenv, "CLIENT_CERTIFICATE")
	keyFile, keyVar := otlpEnv(getenv, "CLIENT_KEY")
	if caFile == "" && certFile == "" && keyFile == "" {
		return nil, nil
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if caFile != "" {
		pem, err := os.ReadFile(caFile)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %w", ErrTracingConfig, caVar, err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("%w: %s=%q: no PEM certificate in it", ErrTracingConfig, caVar, caFile)
		}
		cfg.RootCAs = pool
	}
	switch {
	case certFile != "" && keyFile != "":
		cert, err := tls.LoadX509KeyPair(certFile, keyFile)
		if err != nil {
			return nil, fmt.Errorf("%w: %s, %s: %w", ErrTracingConfig, certVar, keyVar, err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	case certFile != "":
		return nil, fmt.Errorf("%w: %s is set without OTEL_EXPORTER_OTLP_[TRACES_]CLIENT_KEY", ErrTracingConfig, certVar)
	case keyFile != "":
		return nil, fmt.Errorf("%w: %s is set without OTEL_EXPORTER_OTLP_[TRACES_]CLIENT_CERTIFICATE", ErrTracingConfig, keyVar)
	}
	return cfg, nil
}

// tracingResource describes the process: service name and version,
// OTEL_RESOURCE_ATTRIBUTES, and the SDK.
func tracingResource(ctx context.Context, getenv func(string) string, service, version string) (*resource.Resource, error) {
	var attrs []attribute.KeyValue
	if ra := strings.TrimSpace(getenv("OTEL_RESOURCE_ATTRIBUTES")); ra != "" {
		kv, err := parseKeyValues(ra)
		if err != nil {
			return nil, fmt.Errorf("%w: OTEL_RESOURCE_ATTRIBUTES: %w", ErrTracingConfig, err)
		}
		for k, v := range kv {
			attrs = append(attrs, attribute.String(k, v))
		}
	}
	if s := strings.TrimSpace(getenv("OTEL_SERVICE_NAME")); s != "" {
		service = s
	}
	attrs = append(attrs, attribute.String("service.name", service))
	if version != "" {
		attrs = append(attrs, attribute.String("service.version", version))
	}
	res, err := resource.New(ctx, resource.WithTelemetrySDK(), resource.WithAttributes(attrs...))
	if err != nil {
		return nil, fmt.Errorf("telemetry: trace resource: %w", err)
	}
	return res, nil
}

// parseKeyValues reads the W3C-baggage-like lists of the OTEL_* variables:
// "k1=v1,k2=v2", keys and values trimmed, values percent-decoded.
func parseKeyValues(s string) (map[string]string, error) {
	m := map[string]string{}
	for item := range strings.SplitSeq(s, ",") {
		if strings.TrimSpace(item) == "" {
			continue
		}
		k, v, ok := strings.Cut(item, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			return nil, fmt.Errorf("entry %q: want key=value", redactEntry(item))
		}
		dv, err := url.PathUnescape(strings.TrimSpace(v))
		if err != nil {
			return nil, fmt.Errorf("entry %q: %w", k+"=…", err)
		}
		m[k] = dv
	}
	return m, nil
}

// redactEntry hides the value part of a malformed key=value entry, which
// may hold a credential, in an error message.
func redactEntry(item string) string {
	if k, _, ok := strings.Cut(item, "="); ok {
		return k + "=…"
	}
	if len(item) > 8 {
		return item[:4] + "…"
	}
	return item
}
