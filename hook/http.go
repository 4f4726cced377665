package hook

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Poster sends the POST of an HTTP hook and returns the reply's status and
// up to limit bytes of its body. It is the hook's transport, kept out of
// the core (package hook/httphook implements it over net/http), so that
// the run loop links no HTTP client. It must honour ctx.
type Poster interface {
	Post(ctx context.Context, url string, header map[string]string, body []byte, limit int64) (status int, reply []byte, err error)
}

// errNoPoster is an HTTP hook's error without a transport.
var errNoPoster = errors.New("hook: an HTTP hook needs a Poster (hook/httphook.Client)")

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
	// Poster sends the request (hook/httphook.Client); the hook's timeout
	// bounds the call.
	Poster Poster
	// Timeout bounds the call; zero means [DefaultTimeout].
	Timeout time.Duration
	// Claude sends Claude Code's event and tool names.
	Claude bool
}

// Run makes one call.
func (h *HTTP) Run(ctx context.Context, in Input) (Outcome, error) {
	payload, err := encodeInput(in, h.Claude)
	if err != nil {
		return Outcome{}, err
	}
	timeout := h.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	if h.Poster == nil {
		return Outcome{}, errNoPoster
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	header := map[string]string{"Content-Type": "application/json", "User-Agent": "rein-hook"}
	for k, v := range h.Headers {
		for d := range header {
			if strings.EqualFold(d, k) {
				delete(header, d) // the hook's own header wins
			}
		}
		header[k] = expandHeader(v, h.PassEnv, h.Getenv)
	}
	status, body, err := h.Poster.Post(ctx, h.URL, header, payload, maxOutput)
	if err != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return Outcome{}, fmt.Errorf("%w: POST %s", ErrTimeout, h.URL)
		}
		return Outcome{}, fmt.Errorf("hook: POST %s: %w", h.URL, err)
	}
	if status < 200 || status > 299 {
		excerpt := strings.TrimSpace(string(body))
		if len(excerpt) > 200 {
			excerpt = excerpt[:200] + "…"
		}
		return Outcome{}, fmt.Errorf("hook: POST %s: status %d: %s", h.URL, status, excerpt)
	}
	o, err := parseOutput(in.Event, body)
	return fixInput(o, h.Claude, in), err
}
