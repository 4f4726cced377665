package hook

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// HTTP is a hook that POSTs the input as JSON to a URL (SPEC HOOK-3). A 2xx
// reply's body is read like a command hook's stdout (Claude Code's JSON
// output, or plain text); any other status is a non-blocking failure.
type HTTP struct {
	// URL receives the POST.
	URL string
	// Headers are added to the request. A value may refer to variables
	// ($NAME or ${NAME}): those PassEnv names are replaced with their
	// values, any other with nothing.
	Headers map[string]string
	// PassEnv names the variables headers may use.
	PassEnv []string
	// Getenv reads rein's environment; nil reads the process's.
	Getenv func(string) string
	// Client sends the request; nil means a client without its own timeout
	// (the hook's timeout bounds the call).
	Client *http.Client
	// Timeout bounds the call; zero means [DefaultTimeout].
	Timeout time.Duration
	// Claude sends Claude Code's event and tool names.
	Claude bool
}

// Run makes one call.
func (h *HTTP) Run(ctx context.Context, in Input) (Outcome, error) {
	payload, sent, err := encodeInput(in, h.Claude)
	if err != nil {
		return Outcome{}, err
	}
	timeout := h.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, h.URL, bytes.NewReader(payload))
	if err != nil {
		return Outcome{}, fmt.Errorf("hook: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "rein-hook")
	for k, v := range h.Headers {
		req.Header.Set(k, expandHeader(v, h.PassEnv, h.Getenv))
	}
	client := h.Client
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return Outcome{}, fmt.Errorf("%w: POST %s", ErrTimeout, h.URL)
		}
		return Outcome{}, fmt.Errorf("hook: POST %s: %w", h.URL, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxOutput))
	if err != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return Outcome{}, fmt.Errorf("%w: POST %s", ErrTimeout, h.URL)
		}
		return Outcome{}, fmt.Errorf("hook: POST %s: %w", h.URL, err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		excerpt := strings.TrimSpace(string(body))
		if len(excerpt) > 200 {
			excerpt = excerpt[:200] + "…"
		}
		return Outcome{}, fmt.Errorf("hook: POST %s: status %d: %s", h.URL, resp.StatusCode, excerpt)
	}
	o, err := parseOutput(in.Event, body)
	return fixInput(o, sent, in), err
}
