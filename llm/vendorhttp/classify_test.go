package vendorhttp_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/llm/vendorhttp"
)

// httpCase is one vendor error reply and how SPEC PROV-7 classifies it.
type httpCase struct {
	name   string
	status int
	header http.Header // set as a raw map: names are NOT canonicalised
	body   string
	hint   string // WithAuthHint's env var, applied when set

	kind      llm.ErrorKind
	retryable bool
	after     time.Duration // exact RetryAfter, unless afterMax is set
	afterMax  time.Duration // RetryAfter in (after, afterMax] (HTTP-date: second precision)
	msg       string        // the expected Message, verbatim
	hintHas   string        // a substring the Hint must hold
}

// Vendor error bodies, as the real APIs send them.
const (
	anthropicRateLimit = `{"type":"error","error":{"type":"rate_limit_error","message":"Number of request tokens has exceeded your per-minute rate limit (https://docs.anthropic.com/en/api/rate-limits); see the response headers for current usage. Please reduce the prompt length or the maximum tokens requested, or try again later."}}`
	anthropicRateMsg   = "Number of request tokens has exceeded your per-minute rate limit (https://docs.anthropic.com/en/api/rate-limits); see the response headers for current usage. Please reduce the prompt length or the maximum tokens requested, or try again later."

	geminiExhausted = `{"error":{"code":429,"message":"Resource has been exhausted (e.g. check quota).","status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"7s"}]}}`

	// Gemini's free-tier per-minute limit: the text speaks of "quota" and
	// "billing", but the RetryInfo says when to come back — a rate limit.
	geminiPerMinute    = `{"error":{"code":429,"message":"You exceeded your current quota, please check your plan and billing details. For more information on this error, head to: https://ai.google.dev/gemini-api/docs/rate-limits.","status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.QuotaFailure","violations":[{"quotaMetric":"generativelanguage.googleapis.com/generate_content_free_tier_input_token_count","quotaId":"GenerateContentInputTokensPerModelPerMinute-FreeTier","quotaDimensions":{"location":"global","model":"gemini-2.5-flash"},"quotaValue":"250000"}]},{"@type":"type.googleapis.com/google.rpc.Help","links":[{"description":"Learn more about Gemini API quotas","url":"https://ai.google.dev/gemini-api/docs/rate-limits"}]},{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"26s"}]}}`
	geminiPerMinuteMsg = "You exceeded your current quota, please check your plan and billing details. For more information on this error, head to: https://ai.google.dev/gemini-api/docs/rate-limits."

	openaiQuota    = `{"error":{"message":"You exceeded your current quota, please check your plan and billing details. For more information on this error, read the docs: https://platform.openai.com/docs/guides/error-codes/api-errors.","type":"insufficient_quota","param":null,"code":"insufficient_quota"}}`
	openaiQuotaMsg = "You exceeded your current quota, please check your plan and billing details. For more information on this error, read the docs: https://platform.openai.com/docs/guides/error-codes/api-errors."

	geminiBadKey = `{"error":{"code":400,"message":"API key not valid. Please pass a valid API key.","status":"INVALID_ARGUMENT","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"API_KEY_INVALID","domain":"googleapis.com","metadata":{"service":"generativelanguage.googleapis.com"}}]}}`

	openaiOverflow    = `{"error":{"message":"This model's maximum context length is 128000 tokens. However, your messages resulted in 130512 tokens. Please reduce the length of the messages.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}`
	openaiOverflowMsg = "This model's maximum context length is 128000 tokens. However, your messages resulted in 130512 tokens. Please reduce the length of the messages."
)

func anthropicErr(typ, msg string) string {
	return fmt.Sprintf(`{"type":"error","error":{"type":%q,"message":%q}}`, typ, msg)
}

func openaiErr(typ, code, msg string) string {
	return fmt.Sprintf(`{"error":{"message":%q,"type":%q,"param":null,"code":%q}}`, msg, typ, code)
}

func geminiErr(code int, status, msg string) string {
	return fmt.Sprintf(`{"error":{"code":%d,"message":%q,"status":%q}}`, code, msg, status)
}

func TestFromHTTPRetryAfter(t *testing.T) { // PROV-7: retry-after, retry-after-ms, RetryInfo
	inTen := time.Now().Add(10 * time.Second).UTC().Format(http.TimeFormat)
	past := time.Now().Add(-time.Hour).UTC().Format(http.TimeFormat)
	rate := func(name string, h http.Header, body string, after time.Duration) httpCase {
		return httpCase{name: name, status: 429, header: h, body: body,
			kind: llm.KindRateLimit, retryable: true, after: after, msg: anthropicRateMsg}
	}
	cases := []httpCase{
		rate("retry-after seconds", http.Header{"Retry-After": {"2"}}, anthropicRateLimit, 2*time.Second),
		rate("retry-after fractional seconds", http.Header{"Retry-After": {"1.5"}}, anthropicRateLimit, 1500*time.Millisecond),
		rate("retry-after lower-case name", http.Header{"retry-after": {"3"}}, anthropicRateLimit, 3*time.Second),
		rate("retry-after negative ignored", http.Header{"Retry-After": {"-4"}}, anthropicRateLimit, 0),
		rate("retry-after garbage ignored", http.Header{"Retry-After": {"soon"}}, anthropicRateLimit, 0),
		rate("retry-after HTTP-date in the past", http.Header{"Retry-After": {past}}, anthropicRateLimit, 0),
		{name: "retry-after HTTP-date", status: 429, header: http.Header{"Retry-After": {inTen}}, body: anthropicRateLimit,
			kind: llm.KindRateLimit, retryable: true, after: 9 * time.Second, afterMax: 10 * time.Second, msg: anthropicRateMsg},
		rate("retry-after-ms lower case", http.Header{"retry-after-ms": {"1500"}}, anthropicRateLimit, 1500*time.Millisecond),
		rate("retry-after-ms canonical", http.Header{"Retry-After-Ms": {"1500"}}, anthropicRateLimit, 1500*time.Millisecond),
		rate("retry-after-ms upper case", http.Header{"RETRY-AFTER-MS": {"1500"}}, anthropicRateLimit, 1500*time.Millisecond),
		rate("retry-after-ms fractional", http.Header{"Retry-After-Ms": {"12.5"}}, anthropicRateLimit, 12500*time.Microsecond),
		rate("retry-after-ms wins over retry-after", http.Header{"retry-after-ms": {"250"}, "Retry-After": {"9"}}, anthropicRateLimit, 250*time.Millisecond),
		// Attack rows: a hostile vendor's waits are capped at MaxRetryAfter,
		// never overflow into a negative one.
		rate("retry-after-ms huge capped", http.Header{"retry-after-ms": {"1e300"}}, anthropicRateLimit, vendorhttp.MaxRetryAfter),
		rate("retry-after-ms infinite capped", http.Header{"retry-after-ms": {"+Inf"}}, anthropicRateLimit, vendorhttp.MaxRetryAfter),
		rate("retry-after-ms NaN ignored", http.Header{"retry-after-ms": {"NaN"}}, anthropicRateLimit, 0),
		rate("retry-after huge capped", http.Header{"Retry-After": {"99999999999999999999"}}, anthropicRateLimit, vendorhttp.MaxRetryAfter),
		{name: "Gemini RetryInfo huge capped", status: 429, body: strings.Replace(geminiExhausted, `"7s"`, `"2000000h"`, 1),
			kind: llm.KindRateLimit, retryable: true, after: vendorhttp.MaxRetryAfter, msg: "Resource has been exhausted (e.g. check quota)."},
		{name: "Gemini RetryInfo", status: 429, body: geminiExhausted,
			kind: llm.KindRateLimit, retryable: true, after: 7 * time.Second, msg: "Resource has been exhausted (e.g. check quota)."},
		{name: "Gemini RetryInfo fractional", status: 429, body: strings.Replace(geminiExhausted, `"7s"`, `"1.500s"`, 1),
			kind: llm.KindRateLimit, retryable: true, after: 1500 * time.Millisecond, msg: "Resource has been exhausted (e.g. check quota)."},
		{name: "header wins over RetryInfo", status: 429, header: http.Header{"Retry-After": {"3"}}, body: geminiExhausted,
			kind: llm.KindRateLimit, retryable: true, after: 3 * time.Second, msg: "Resource has been exhausted (e.g. check quota)."},
		{name: "Gemini free-tier per-minute limit is a rate limit, not quota", status: 429, body: geminiPerMinute,
			kind: llm.KindRateLimit, retryable: true, after: 26 * time.Second, msg: geminiPerMinuteMsg},
		{name: "503 with retry-after", status: 503, header: http.Header{"retry-after": {"5"}},
			body: openaiErr("server_error", "", "The server is overloaded or not ready yet."),
			kind: llm.KindOverloaded, retryable: true, after: 5 * time.Second, msg: "The server is overloaded or not ready yet."},
	}
	runHTTPCases(t, cases)
}

func TestFromHTTPStatus(t *testing.T) { // PROV-7: each status's kind, retryability and message
	cases := []httpCase{
		{name: "529 overloaded", status: 529, body: anthropicErr("overloaded_error", "Overloaded"),
			kind: llm.KindOverloaded, retryable: true, msg: "Overloaded"},
		{name: "503", status: 503, body: geminiErr(503, "UNAVAILABLE", "The model is overloaded. Please try again later."),
			kind: llm.KindOverloaded, retryable: true, msg: "The model is overloaded. Please try again later."},
		{name: "500", status: 500, body: anthropicErr("api_error", "Internal server error"),
			kind: llm.KindServer, retryable: true, msg: "Internal server error"},
		{name: "502 HTML body kept verbatim", status: 502, body: "<html><body><h1>502 Bad Gateway</h1></body></html>\n",
			kind: llm.KindServer, retryable: true, msg: "<html><body><h1>502 Bad Gateway</h1></body></html>"},
		{name: "504", status: 504, body: openaiErr("server_error", "", "Gateway timeout."),
			kind: llm.KindServer, retryable: true, msg: "Gateway timeout."},
		{name: "408", status: 408, body: openaiErr("timeout", "", "Request timed out."),
			kind: llm.KindTimeout, retryable: true, msg: "Request timed out."},
		{name: "401 Anthropic with hint", status: 401, hint: "ANTHROPIC_API_KEY",
			body: anthropicErr("authentication_error", "invalid x-api-key"),
			kind: llm.KindAuth, msg: "invalid x-api-key", hintHas: "ANTHROPIC_API_KEY"},
		{name: "401 OpenAI with hint", status: 401, hint: "OPENAI_API_KEY",
			body: openaiErr("invalid_request_error", "invalid_api_key", "Incorrect API key provided: sk-abc***xyz. You can find your API key at https://platform.openai.com/account/api-keys."),
			kind: llm.KindAuth, msg: "Incorrect API key provided: sk-abc***xyz. You can find your API key at https://platform.openai.com/account/api-keys.", hintHas: "OPENAI_API_KEY"},
		// Gemini answers a wrong key with 400 INVALID_ARGUMENT, reason API_KEY_INVALID.
		{name: "400 Gemini API_KEY_INVALID is auth", status: 400, hint: "GEMINI_API_KEY", body: geminiBadKey,
			kind: llm.KindAuth, msg: "API key not valid. Please pass a valid API key.", hintHas: "GEMINI_API_KEY"},
		{name: "403", status: 403, body: anthropicErr("permission_error", "Your API key does not have permission to use the specified resource."),
			kind: llm.KindPermission, msg: "Your API key does not have permission to use the specified resource.", hintHas: "permission"},
		{name: "400", status: 400, body: anthropicErr("invalid_request_error", "messages: roles must alternate between \"user\" and \"assistant\", but found multiple \"user\" roles in a row"),
			kind: llm.KindBadRequest, msg: "messages: roles must alternate between \"user\" and \"assistant\", but found multiple \"user\" roles in a row"},
		{name: "404", status: 404, body: anthropicErr("not_found_error", "model: claude-nope-9"),
			kind: llm.KindNotFound, msg: "model: claude-nope-9", hintHas: "model name"},
		{name: "404 OpenAI", status: 404, body: openaiErr("invalid_request_error", "model_not_found", "The model `gpt-9` does not exist or you do not have access to it."),
			kind: llm.KindNotFound, msg: "The model `gpt-9` does not exist or you do not have access to it."},
		{name: "422", status: 422, body: `{"detail":[{"loc":["body","messages"],"msg":"field required","type":"value_error.missing"}]}`,
			kind: llm.KindBadRequest, msg: `{"detail":[{"loc":["body","messages"],"msg":"field required","type":"value_error.missing"}]}`},
		{name: "413 request too large", status: 413, body: anthropicErr("request_too_large", "Request exceeds the maximum allowed number of bytes."),
			kind: llm.KindContextOverflow, msg: "Request exceeds the maximum allowed number of bytes."},
		{name: "429 insufficient_quota", status: 429, body: openaiQuota,
			kind: llm.KindQuota, msg: openaiQuotaMsg, hintHas: "billing"},
		{name: "429 plain", status: 429, body: openaiErr("requests", "rate_limit_exceeded", "Rate limit reached for gpt-4o in organization org-x on requests per min (RPM): Limit 500, Used 500, Requested 1. Please try again in 120ms."),
			kind: llm.KindRateLimit, retryable: true, msg: "Rate limit reached for gpt-4o in organization org-x on requests per min (RPM): Limit 500, Used 500, Requested 1. Please try again in 120ms."},
		{name: "401 hint not applied to other kinds", status: 500, hint: "ANTHROPIC_API_KEY", body: anthropicErr("api_error", "boom"),
			kind: llm.KindServer, retryable: true, msg: "boom"},
		// Bodies that are not the usual envelope.
		{name: "empty body", status: 500, body: "",
			kind: llm.KindServer, retryable: true, msg: "Internal Server Error"},
		{name: "whitespace body", status: 502, body: " \n",
			kind: llm.KindServer, retryable: true, msg: "Bad Gateway"},
		{name: "plain text body", status: 400, body: "Bad Request: missing model\n",
			kind: llm.KindBadRequest, msg: "Bad Request: missing model"},
		{name: "error as a string", status: 400, body: `{"error":"model 'llama9' not found, try pulling it first"}`,
			kind: llm.KindBadRequest, msg: "model 'llama9' not found, try pulling it first"},
		{name: "message at the top level", status: 500, body: `{"message":"upstream connect error"}`,
			kind: llm.KindServer, retryable: true, msg: "upstream connect error"},
		{name: "truncated JSON", status: 503, body: `{"error":{"message":"Overlo`,
			kind: llm.KindOverloaded, retryable: true, msg: `{"error":{"message":"Overlo`},
		{name: "unknown 3xx status", status: 302, body: "",
			kind: llm.KindUnknown, msg: "Found"},
	}
	runHTTPCases(t, cases)
}

func TestFromHTTPContextOverflow(t *testing.T) { // PROV-7: context overflow → compact, whatever the vendor
	overflow := func(name string, status int, body, msg string) httpCase {
		return httpCase{name: name, status: status, body: body, kind: llm.KindContextOverflow, msg: msg, hintHas: "compact"}
	}
	cases := []httpCase{
		overflow("Anthropic", 400, anthropicErr("invalid_request_error", "prompt is too long: 215000 tokens > 200000 maximum"),
			"prompt is too long: 215000 tokens > 200000 maximum"),
		overflow("OpenAI code", 400, openaiOverflow, openaiOverflowMsg),
		overflow("OpenAI code only", 400, openaiErr("invalid_request_error", "context_length_exceeded", "Your input is too big."),
			"Your input is too big."),
		overflow("OpenAI Responses", 400, openaiErr("invalid_request_error", "context_length_exceeded",
			"Your input exceeds the context window of this model. Please adjust your input and try again."),
			"Your input exceeds the context window of this model. Please adjust your input and try again."),
		overflow("Gemini", 400, geminiErr(400, "INVALID_ARGUMENT", "The input token count (1200000) exceeds the maximum number of tokens allowed (1048576)."),
			"The input token count (1200000) exceeds the maximum number of tokens allowed (1048576)."),
		overflow("vLLM", 400, `{"object":"error","message":"This model's maximum context length is 4096 tokens. However, you requested 5000 tokens (4000 in the messages, 1000 in the completion). Please reduce the length of the messages or completion.","type":"BadRequestError","param":null,"code":400}`,
			"This model's maximum context length is 4096 tokens. However, you requested 5000 tokens (4000 in the messages, 1000 in the completion). Please reduce the length of the messages or completion."),
		overflow("vLLM decoder prompt", 400, `{"object":"error","message":"The decoder prompt (length 8825) is longer than the maximum model length of 8192. Make sure that `+"`max_model_len`"+` is no smaller than the number of text tokens.","type":"BadRequestError","param":null,"code":400}`,
			"The decoder prompt (length 8825) is longer than the maximum model length of 8192. Make sure that `max_model_len` is no smaller than the number of text tokens."),
		overflow("llama.cpp", 400, `{"error":{"code":400,"message":"request (4476 tokens) exceeds the available context size (4096 tokens)","type":"exceed_context_size_error","n_prompt_tokens":4476,"n_ctx":4096}}`,
			"request (4476 tokens) exceeds the available context size (4096 tokens)"),
		overflow("llama.cpp older", 400, `{"error":{"code":400,"message":"the request exceeds the available context size, try increasing it","type":"invalid_request_error"}}`,
			"the request exceeds the available context size, try increasing it"),
		overflow("Ollama-style on 422", 422, `{"error":{"message":"input exceeds the model's context length","type":"invalid_request_error"}}`,
			"input exceeds the model's context length"),
	}
	runHTTPCases(t, cases)
}

func runHTTPCases(t *testing.T, cases []httpCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := vendorhttp.FromHTTP("vendor", tc.status, tc.header, []byte(tc.body))
			if tc.hint != "" {
				if got := e.WithAuthHint(tc.hint); got != e {
					t.Errorf("WithAuthHint returned %p, want the receiver %p", got, e)
				}
			}
			if e.Kind != tc.kind {
				t.Errorf("Kind = %v, want %v", e.Kind, tc.kind)
			}
			if e.Retryable() != tc.retryable {
				t.Errorf("Retryable() = %v, want %v", e.Retryable(), tc.retryable)
			}
			if tc.afterMax > 0 {
				if e.RetryAfter <= tc.after || e.RetryAfter > tc.afterMax {
					t.Errorf("RetryAfter = %v, want in (%v, %v]", e.RetryAfter, tc.after, tc.afterMax)
				}
			} else if e.RetryAfter != tc.after {
				t.Errorf("RetryAfter = %v, want %v", e.RetryAfter, tc.after)
			}
			if e.Message != tc.msg {
				t.Errorf("Message = %q, want %q", e.Message, tc.msg)
			}
			if e.Status != tc.status || e.Provider != "vendor" {
				t.Errorf("Status, Provider = %d, %q, want %d, %q", e.Status, e.Provider, tc.status, "vendor")
			}
			if tc.hintHas != "" && !strings.Contains(e.Hint, tc.hintHas) {
				t.Errorf("Hint = %q, want it to mention %q", e.Hint, tc.hintHas)
			}
			if tc.kind != llm.KindAuth && tc.hint != "" && strings.Contains(e.Hint, tc.hint) {
				t.Errorf("Hint = %q names %s on a %v error", e.Hint, tc.hint, e.Kind)
			}
			if s := e.Error(); !strings.Contains(s, tc.msg) || !strings.HasPrefix(s, "vendor: "+tc.kind.String()) {
				t.Errorf("Error() = %q, want the vendor name, the kind and the message", s)
			}
		})
	}
}

func TestFromHTTPLongBodyTruncated(t *testing.T) {
	body := strings.Repeat("x", 2000)
	e := vendorhttp.FromHTTP("vendor", 500, nil, []byte(body))
	if len(e.Message) != 500 || e.Message != body[:500] {
		t.Errorf("len(Message) = %d, want the first 500 bytes of the body", len(e.Message))
	}
}

// FuzzFromHTTP feeds FromHTTP a vendor's error reply — status, the two
// retry-after headers, body — as a hostile endpoint might send it (PROV-7).
// The result keeps the status and provider, has a named kind and a
// message, and a wait in [0, MaxRetryAfter].
func FuzzFromHTTP(f *testing.F) {
	f.Add(429, "", "2", `{"error":{"type":"rate_limit_error","message":"slow down"}}`)
	f.Add(429, "1500", "", `{"error":{"code":"insufficient_quota","message":"You exceeded your current quota"}}`)
	f.Add(400, "", "", `{"error":{"message":"prompt is too long: 300000 tokens > 200000 maximum"}}`)
	f.Add(429, "", "", `{"error":{"code":429,"status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"7s"}]}}`)
	f.Add(503, "", "Wed, 21 Oct 2015 07:28:00 GMT", `upstream connect error`)
	f.Add(500, "1e300", "-1", `{"error":"text"}`)
	f.Add(0, "", "", ``)
	f.Fuzz(func(t *testing.T, status int, retryAfterMs, retryAfter, body string) {
		h := http.Header{}
		if retryAfterMs != "" {
			h["retry-after-ms"] = []string{retryAfterMs} // not canonicalised, as a raw map may hold it
		}
		if retryAfter != "" {
			h.Set("Retry-After", retryAfter)
		}
		e := vendorhttp.FromHTTP("vendor", status, h, []byte(body))
		if e.Status != status || e.Provider != "vendor" {
			t.Fatalf("Status, Provider = %d, %q; want %d, vendor", e.Status, e.Provider, status)
		}
		if strings.HasPrefix(e.Kind.String(), "kind(") {
			t.Fatalf("unnamed kind %v", e.Kind)
		}
		if e.Message == "" {
			t.Fatal("empty message")
		}
		if e.RetryAfter < 0 || e.RetryAfter > vendorhttp.MaxRetryAfter {
			t.Fatalf("RetryAfter = %v, want within [0, %v]", e.RetryAfter, vendorhttp.MaxRetryAfter)
		}
	})
}
