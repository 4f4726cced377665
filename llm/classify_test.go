package llm_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/reinhq/rein/llm"
)

func TestWithAuthHintKeepsExistingHint(t *testing.T) {
	e := llm.AuthMissing("anthropic", "ANTHROPIC_API_KEY")
	want := e.Hint
	if !strings.Contains(want, "ANTHROPIC_API_KEY") {
		t.Fatalf("AuthMissing hint = %q, want it to name the variable", want)
	}
	if e.WithAuthHint("OTHER_KEY"); e.Hint != want {
		t.Errorf("Hint = %q, want the existing %q kept", e.Hint, want)
	}
	if e.Kind != llm.KindAuth || e.Retryable() {
		t.Errorf("AuthMissing: Kind %v, Retryable %v, want auth, not retryable", e.Kind, e.Retryable())
	}
}

// netTimeout is a net.Error whose Timeout is true, like a dial or read deadline.
type netTimeout struct{}

func (netTimeout) Error() string   { return "i/o timeout" }
func (netTimeout) Timeout() bool   { return true }
func (netTimeout) Temporary() bool { return true }

func TestFromTransport(t *testing.T) { // PROV-7: timeouts, resets and cuts are retried; cancel never
	live := context.Background()
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	expired, cancel2 := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel2()

	reset := &net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", syscall.ECONNRESET)}
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
	existing := &llm.Error{Kind: llm.KindAuth, Provider: "anthropic", Message: "invalid x-api-key"}

	cases := []struct {
		name      string
		ctx       context.Context
		err       error
		kind      llm.ErrorKind
		retryable bool
		wrapped   error // errors.Is(result, wrapped)
	}{
		{"context.Canceled", live, context.Canceled, llm.KindCancelled, false, context.Canceled},
		{"wrapped context.Canceled", live, fmt.Errorf("Post %q: %w", "https://x", context.Canceled), llm.KindCancelled, false, context.Canceled},
		{"cancelled ctx wins over a reset", cancelled, reset, llm.KindCancelled, false, context.Canceled},
		{"expired ctx", expired, context.DeadlineExceeded, llm.KindCancelled, false, context.DeadlineExceeded},
		{"DeadlineExceeded, caller's ctx live", live, context.DeadlineExceeded, llm.KindTimeout, true, context.DeadlineExceeded},
		{"io.ErrUnexpectedEOF", live, io.ErrUnexpectedEOF, llm.KindStreamCut, true, io.ErrUnexpectedEOF},
		{"wrapped io.ErrUnexpectedEOF", live, fmt.Errorf("reading body: %w", io.ErrUnexpectedEOF), llm.KindStreamCut, true, io.ErrUnexpectedEOF},
		{"ECONNRESET in *net.OpError", live, reset, llm.KindNetwork, true, syscall.ECONNRESET},
		{"ECONNREFUSED in *net.OpError", live, refused, llm.KindNetwork, true, syscall.ECONNREFUSED},
		{"ECONNRESET in *url.Error", live, &url.Error{Op: "Post", URL: "https://x", Err: reset}, llm.KindNetwork, true, syscall.ECONNRESET},
		{"net timeout", live, &net.OpError{Op: "read", Net: "tcp", Err: os.ErrDeadlineExceeded}, llm.KindTimeout, true, os.ErrDeadlineExceeded},
		{"custom net.Error timeout", live, netTimeout{}, llm.KindTimeout, true, netTimeout{}},
		{"client timeout in *url.Error", live, &url.Error{Op: "Post", URL: "https://x", Err: netTimeout{}}, llm.KindTimeout, true, netTimeout{}},
		{"unclassifiable", live, errors.New("boom"), llm.KindUnknown, false, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := llm.FromTransport(tc.ctx, "openai", tc.err)
			if e.Kind != tc.kind {
				t.Errorf("Kind = %v, want %v", e.Kind, tc.kind)
			}
			if e.Retryable() != tc.retryable {
				t.Errorf("Retryable() = %v, want %v", e.Retryable(), tc.retryable)
			}
			if e.RetryAfter != 0 || e.Status != 0 || e.Provider != "openai" {
				t.Errorf("RetryAfter, Status, Provider = %v, %d, %q; want 0, 0, openai", e.RetryAfter, e.Status, e.Provider)
			}
			if e.Message != "" {
				t.Errorf("Message = %q, want empty (the cause is in Err)", e.Message)
			}
			if tc.wrapped != nil && !errors.Is(e, tc.wrapped) {
				t.Errorf("errors.Is(%v, %v) = false", e, tc.wrapped)
			}
			if llm.KindOf(e) != tc.kind {
				t.Errorf("KindOf = %v, want %v", llm.KindOf(e), tc.kind)
			}
		})
	}
	t.Run("an *Error passes through", func(t *testing.T) {
		wrapped := fmt.Errorf("stream: %w", existing)
		if got := llm.FromTransport(cancelled, "openai", wrapped); got != existing {
			t.Errorf("FromTransport = %v, want the same *Error %v", got, existing)
		}
	})
}

func TestKindOf(t *testing.T) {
	cases := []struct {
		err  error
		want llm.ErrorKind
	}{
		{&llm.Error{Kind: llm.KindQuota}, llm.KindQuota},
		{fmt.Errorf("turn 3: %w", &llm.Error{Kind: llm.KindAuth}), llm.KindAuth},
		{context.Canceled, llm.KindCancelled},
		{fmt.Errorf("x: %w", context.DeadlineExceeded), llm.KindCancelled},
		{errors.New("boom"), llm.KindUnknown},
		{nil, llm.KindUnknown},
	}
	for _, tc := range cases {
		if got := llm.KindOf(tc.err); got != tc.want {
			t.Errorf("KindOf(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}

func TestErrorKindStringsAreDistinct(t *testing.T) {
	seen := map[string]llm.ErrorKind{}
	for k := llm.KindUnknown; k <= llm.KindCancelled; k++ {
		s := k.String()
		if s == "" || strings.HasPrefix(s, "kind(") {
			t.Errorf("kind %d has no name", k)
		}
		if prev, dup := seen[s]; dup {
			t.Errorf("kinds %d and %d share the name %q", prev, k, s)
		}
		seen[s] = k
	}
	if s := llm.ErrorKind(200).String(); s != "kind(200)" {
		t.Errorf("ErrorKind(200).String() = %q", s)
	}
}

func TestStreamCutAndMalformed(t *testing.T) {
	cut := llm.StreamCut("gemini", "finishReason")
	if cut.Kind != llm.KindStreamCut || !cut.Retryable() || !strings.Contains(cut.Message, "finishReason") {
		t.Errorf("StreamCut = %+v", cut)
	}
	cause := errors.New("invalid character 'x'")
	bad := llm.Malformed("gemini", cause)
	if bad.Kind != llm.KindMalformed || !bad.Retryable() || !errors.Is(bad, cause) || !strings.Contains(bad.Message, cause.Error()) {
		t.Errorf("Malformed = %+v", bad)
	}
}
