// Package vendorhttp is the HTTP side of rein's model calls: what the
// vendor adapters (llm/anthropic, llm/openai, llm/gemini, llm/ollama) share
// when they speak their vendors' HTTP APIs.
//
// [FromHTTP] and [FromResponse] classify a vendor's error reply — status,
// headers, body — into an [*llm.Error] whose [llm.ErrorKind] the retry
// policy of package llm acts on (SPEC PROV-7); [FromRoundTrip] classifies a
// failed round trip of an http.Client. [GuardRedirects] keeps credentials
// from following a redirect to another host. [ParseRetryAfter] is the one
// parser of a Retry-After header, shared with rein's client and telemetry.
//
// It is kept out of package llm so that the core packages, which import
// llm for its vendor-neutral conversation and error types, do not link
// net/http (internal/arch's TestCoreHasNoHTTP).
package vendorhttp
