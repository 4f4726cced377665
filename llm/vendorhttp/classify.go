package vendorhttp

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/reinhq/rein/llm"
)

// MaxErrorBody bounds how much of an error reply [FromResponse] reads.
const MaxErrorBody = 1 << 20

// FromResponse classifies the error reply resp: it reads at most
// MaxErrorBody of the body, closes it, and returns [FromHTTP] of the
// status, headers and body.
func FromResponse(provider string, resp *http.Response) *llm.Error {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, MaxErrorBody))
	_ = resp.Body.Close()
	return FromHTTP(provider, resp.StatusCode, resp.Header, b)
}

// FromRoundTrip classifies a failed request of an http.Client, before any
// response. net/http wraps every failure in a *url.Error, which passes for
// a net.Error whatever happened; what the round trip itself reported is
// classified instead ([llm.FromTransport]), so a bad URL scheme or a TLS failure
// is not taken for a network error and retried.
func FromRoundTrip(ctx context.Context, provider string, err error) *llm.Error {
	if ue, ok := errors.AsType[*url.Error](err); ok {
		err = ue.Err
	}
	return llm.FromTransport(ctx, provider, err)
}

// FromHTTP classifies a vendor's error reply: its status, headers and body.
// Every adapter calls it, so one status means one thing whatever the vendor.
//
// The wait the vendor asks for is read from retry-after-ms, then retry-after
// (delta-seconds or HTTP-date), then a Gemini RetryInfo detail in the body,
// at most MaxRetryAfter whichever says it; header names are matched
// case-insensitively. The vendor's message is kept
// verbatim. A context-length error is llm.KindContextOverflow whatever its status.
func FromHTTP(provider string, status int, header http.Header, body []byte) *llm.Error {
	msg, code, retryInfo := parseErrorBody(body)
	e := &llm.Error{Provider: provider, Status: status, Message: msg}
	e.RetryAfter = retryAfter(header)
	if e.RetryAfter == 0 {
		e.RetryAfter = retryInfo
	}
	switch {
	case isContextOverflow(status, code, msg):
		e.Kind = llm.KindContextOverflow
		e.Hint = "the conversation is larger than the model's context window; compact it or start a new session"
	case status == http.StatusTooManyRequests && isQuota(code, msg, e.RetryAfter):
		e.Kind = llm.KindQuota
		e.Hint = "the account's quota or credit is used up; check billing with the provider"
	case status == http.StatusTooManyRequests:
		e.Kind = llm.KindRateLimit
	case status == 529 || status == http.StatusServiceUnavailable:
		e.Kind = llm.KindOverloaded
	case status == http.StatusRequestTimeout:
		e.Kind = llm.KindTimeout
	case status >= 500:
		e.Kind = llm.KindServer
	case status == http.StatusUnauthorized, status == http.StatusBadRequest && strings.Contains(code, "API_KEY_INVALID"):
		e.Kind = llm.KindAuth
	case status == http.StatusForbidden:
		e.Kind = llm.KindPermission
		e.Hint = "the API key is valid but may not use this model or endpoint; check the key's permissions"
	case status == http.StatusNotFound:
		e.Kind = llm.KindNotFound
		e.Hint = "check the model name and the base URL"
	case status >= 400:
		e.Kind = llm.KindBadRequest
	default:
		e.Kind = llm.KindUnknown
	}
	if e.Message == "" {
		e.Message = strings.TrimSpace(string(truncate(body, 500)))
	}
	if e.Message == "" {
		e.Message = http.StatusText(status)
	}
	if e.Message == "" {
		e.Message = "HTTP " + strconv.Itoa(status)
	}
	return e
}

func retryAfter(h http.Header) time.Duration {
	if h == nil {
		return 0
	}
	if v := headerValue(h, "Retry-After-Ms"); v != "" {
		if ms, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil && ms >= 0 {
			return time.Duration(min(ms, float64(MaxRetryAfter/time.Millisecond)) * float64(time.Millisecond))
		}
	}
	d, _ := ParseRetryAfter(headerValue(h, "Retry-After"), time.Now())
	return d
}

// parseErrorBody reads the error shapes of Anthropic, OpenAI and Gemini:
// {"error": {"message", "type"|"code"|"status", "details": [RetryInfo]}}.
func parseErrorBody(body []byte) (msg, code string, retry time.Duration) {
	var env struct {
		Error json.RawMessage `json:"error"`
		// Some OpenAI-compatible servers put the message at the top level.
		Message string `json:"message"`
	}
	if json.Unmarshal(body, &env) != nil {
		return "", "", 0
	}
	var inner struct {
		Message string          `json:"message"`
		Type    string          `json:"type"`
		Code    json.RawMessage `json:"code"`
		Status  string          `json:"status"`
		Details []struct {
			Type       string `json:"@type"`
			RetryDelay string `json:"retryDelay"`
			Reason     string `json:"reason"` // google.rpc.ErrorInfo: "API_KEY_INVALID"
		} `json:"details"`
	}
	if len(env.Error) > 0 && env.Error[0] == '"' { // {"error": "text"}
		_ = json.Unmarshal(env.Error, &msg)
		return msg, "", 0
	}
	if json.Unmarshal(env.Error, &inner) != nil {
		return env.Message, "", 0
	}
	msg = inner.Message
	if msg == "" {
		msg = env.Message
	}
	var codeStr string
	if json.Unmarshal(inner.Code, &codeStr) != nil {
		codeStr = ""
	}
	code = strings.Join(nonEmpty(inner.Type, codeStr, inner.Status), " ")
	for _, d := range inner.Details {
		if d.Reason != "" {
			code += " " + d.Reason
		}
		if strings.HasSuffix(d.Type, "google.rpc.RetryInfo") && d.RetryDelay != "" {
			if dur, err := time.ParseDuration(d.RetryDelay); err == nil && dur > 0 {
				retry = min(dur, MaxRetryAfter)
			}
		}
	}
	return msg, code, retry
}

var overflowPhrases = []string{
	"prompt is too long",                   // Anthropic
	"context_length_exceeded",              // OpenAI code
	"maximum context length",               // OpenAI, vLLM
	"context window",                       // OpenAI Responses, others
	"exceeds the maximum number of tokens", // Gemini
	"input token count",                    // Gemini
	"too many tokens",                      // generic
	"context length",                       // llama.cpp, Ollama
	"request_too_large",                    // Anthropic 413
	"available context size",               // llama.cpp: "request (N tokens) exceeds the available context size (M tokens)"
	"exceed_context_size_error",            // llama.cpp error type
	"maximum model length",                 // vLLM: "The decoder prompt (length N) is longer than the maximum model length of M."
}

func isContextOverflow(status int, code, msg string) bool {
	if status == http.StatusRequestEntityTooLarge {
		return true
	}
	if status != http.StatusBadRequest && status != http.StatusUnprocessableEntity {
		return false
	}
	s := strings.ToLower(code + " " + msg)
	for _, p := range overflowPhrases {
		if strings.Contains(s, p) {
			return true
		}
	}
	return false
}

// isQuota tells a used-up quota or credit from a rate limit. OpenAI's code
// insufficient_quota is decisive. The words are not when the vendor also says
// when to retry: Gemini's per-minute free-tier limit reads "You exceeded your
// current quota, please check your plan and billing details" and carries a
// RetryInfo.
func isQuota(code, msg string, retryAfter time.Duration) bool {
	if strings.Contains(strings.ToLower(code), "insufficient_quota") {
		return true
	}
	if retryAfter > 0 {
		return false
	}
	s := strings.ToLower(msg)
	return strings.Contains(s, "exceeded your current quota") || strings.Contains(s, "billing")
}

// headerValue returns the first value of the header name, matched
// case-insensitively even in a map whose keys were not canonicalised.
func headerValue(h http.Header, name string) string {
	if v := h.Get(name); v != "" {
		return v
	}
	for k, vs := range h {
		if len(vs) > 0 && strings.EqualFold(k, name) {
			return vs[0]
		}
	}
	return ""
}

func nonEmpty(ss ...string) []string {
	out := ss[:0]
	for _, s := range ss {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

func truncate(b []byte, n int) []byte {
	if len(b) > n {
		return b[:n]
	}
	return b
}
