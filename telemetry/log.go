package telemetry

import (
	"context"
	"encoding"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"strings"
)

// Stable attribute keys of rein's log records (docs/architecture.md,
// "Conventions").
// Every record about a run carries the session and run ids; the others
// appear where they apply.
const (
	KeySessionID = "session_id"
	KeyRunID     = "run_id"
	KeyTurn      = "turn"
	KeyTool      = "tool"
	KeyCaller    = "caller"
)

// LogOptions configures [NewLogger]. The zero value is a text logger at
// level info.
type LogOptions struct {
	// JSON selects the JSON handler (server mode); text otherwise.
	JSON bool
	// Level is "debug", "info", "warn" (or "warning") or "error", any case,
	// optionally with an offset as log/slog writes it ("info+2"); "" is
	// info.
	Level string
	// AddSource adds the file and line of the logging call.
	AddSource bool
}

// NewLogger returns a logger writing to w, redacting secrets (see
// [NewRedactingHandler]). An unknown level falls back to info, and the
// logger's first record is a warning that says so; validate the level
// with [ParseLevel] beforehand to refuse it instead.
func NewLogger(w io.Writer, opts LogOptions) *slog.Logger {
	level, err := ParseLevel(opts.Level)
	ho := &slog.HandlerOptions{Level: level, AddSource: opts.AddSource}
	var h slog.Handler
	if opts.JSON {
		h = slog.NewJSONHandler(w, ho)
	} else {
		h = slog.NewTextHandler(w, ho)
	}
	l := slog.New(NewRedactingHandler(h))
	if err != nil {
		l.Warn("telemetry: unknown log level, logging at info", "error", err)
	}
	return l
}

// ParseLevel reads a log level: "debug", "info", "warn", "warning" or
// "error" in any case, with an optional offset ("debug-2", "info+1");
// "" is info.
func ParseLevel(s string) (slog.Level, error) {
	var l slog.Level
	switch t := strings.TrimSpace(s); {
	case t == "":
		return slog.LevelInfo, nil
	case strings.EqualFold(t, "warning"):
		return slog.LevelWarn, nil
	default:
		if err := l.UnmarshalText([]byte(t)); err != nil {
			return slog.LevelInfo, fmt.Errorf("telemetry: log level %q: want debug, info, warn or error", s)
		}
	}
	return l, nil
}

// NewRedactingHandler wraps h so that no secret reaches it: the value of an
// attribute whose key names a secret ([SecretKey]) — or that sits in a
// group so named — becomes [Redacted]; the message and every string value,
// in nested groups too, are masked ([Mask]). Values of other kinds are
// handled by what they are: numbers, booleans, times and durations pass
// through; an error or a text marshaler is logged as its masked text;
// []byte as masked text; any other value as its JSON with secret keys and
// strings redacted, when that changes anything (otherwise it passes
// through as it was).
func NewRedactingHandler(h slog.Handler) slog.Handler {
	if r, ok := h.(*redactingHandler); ok {
		return r
	}
	return &redactingHandler{inner: h}
}

type redactingHandler struct {
	inner slog.Handler
	// secret says that an open group's name names a secret: every value
	// under it is redacted.
	secret bool
}

func (h *redactingHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return h.inner.Enabled(ctx, l)
}

func (h *redactingHandler) Handle(ctx context.Context, r slog.Record) error {
	nr := slog.NewRecord(r.Time, r.Level, Mask(r.Message), r.PC)
	r.Attrs(func(a slog.Attr) bool {
		nr.AddAttrs(h.redactAttr(a))
		return true
	})
	return h.inner.Handle(ctx, nr)
}

func (h *redactingHandler) WithAttrs(as []slog.Attr) slog.Handler {
	red := make([]slog.Attr, len(as))
	for i, a := range as {
		red[i] = h.redactAttr(a)
	}
	return &redactingHandler{inner: h.inner.WithAttrs(red), secret: h.secret}
}

func (h *redactingHandler) WithGroup(name string) slog.Handler {
	if name == "" {
		return h
	}
	return &redactingHandler{inner: h.inner.WithGroup(name), secret: h.secret || SecretKey(name)}
}

func (h *redactingHandler) redactAttr(a slog.Attr) slog.Attr {
	return redactAttr(a, h.secret)
}

// redactAttr returns a with its value redacted; under a secret group every
// value is.
func redactAttr(a slog.Attr, secret bool) slog.Attr {
	if a.Key != "" && (secret || SecretKey(a.Key)) {
		return slog.String(a.Key, Redacted)
	}
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		if s := v.String(); mayHoldSecret(s) {
			v = slog.StringValue(Mask(s))
		}
	case slog.KindGroup:
		g := v.Group()
		red := make([]slog.Attr, len(g))
		for i, x := range g {
			red[i] = redactAttr(x, secret) // secret only for an inline group (key "")
		}
		v = slog.GroupValue(red...)
	case slog.KindAny:
		v = redactAny(v)
	}
	return slog.Attr{Key: a.Key, Value: v}
}

// redactAny redacts a value of kind Any by what it holds.
func redactAny(v slog.Value) slog.Value {
	switch x := v.Any().(type) {
	case nil:
		return v
	case error:
		return slog.StringValue(Mask(x.Error()))
	case []byte:
		return slog.StringValue(Mask(string(x)))
	case json.RawMessage:
		if out, changed := redactJSON(x); changed {
			return slog.AnyValue(json.RawMessage(out))
		}
		return v
	case encoding.TextMarshaler:
		b, err := x.MarshalText()
		if err != nil {
			return slog.StringValue(Mask(fmt.Sprintf("%+v", x)))
		}
		if s := string(b); mayHoldSecret(s) {
			return slog.StringValue(Mask(s))
		}
		return v
	default:
		b, err := json.Marshal(x)
		if err != nil {
			return slog.StringValue(Mask(fmt.Sprintf("%+v", x)))
		}
		if out, changed := redactJSON(b); changed {
			return slog.AnyValue(json.RawMessage(out))
		}
		return v
	}
}
