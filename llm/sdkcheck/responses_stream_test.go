package sdkcheck_test

import (
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"
	"github.com/openai/openai-go/v3/shared"

	"github.com/reinhq/rein/llm"
	rein "github.com/reinhq/rein/llm/openai"
)

// responsesKnown lists every difference between rein's reply and the one
// read from openai-go's Responses stream events, per fixture under
// testdata/streams/responses; anything else fails TestResponsesStreams.
//
// openai-go has no accumulator for the Responses API: the SDK's final
// message here is the output of the response.completed (or
// response.incomplete) event, or, when that output is empty, the items of
// the output_item.done events in their order — what a program using the
// SDK reads. Several fixtures, rebuilt in the adapter's tests from the
// documented events, stream a message's text without its
// output_item.done; rein keeps that text, such a program does not.
var responsesKnown = []knownDiff{
	{fixture: "reasoning-summary-parts", name: "rein keeps text streamed by deltas of an item that never got its output_item.done",
		ref: "intended: llm/openai/responses_stream.go", reconcile: deltaOnlyText},
	{fixture: "refusal", name: "rein keeps text streamed by deltas of an item that never got its output_item.done",
		ref: "intended: llm/openai/responses_stream.go", reconcile: deltaOnlyText},
	{fixture: "incomplete-other-reason", name: "rein keeps text streamed by deltas of an item that never got its output_item.done",
		ref: "intended: llm/openai/responses_stream.go", reconcile: deltaOnlyText},
	{fixture: "keep-alive", name: "the SDK fails on a keep-alive event with empty data; rein skips it",
		ref: "intended: llm/openai/prov2_test.go TestPROV2KeepAlive", sdkError: "unexpected end of JSON input"},
	{fixture: "reasoning-outside-output", name: "rein keeps text streamed by deltas of an item that never got its output_item.done",
		ref: "intended: llm/openai/responses_stream.go", reconcile: deltaOnlyText},
	{fixture: "byte-order-mark-call", name: "rein keeps a call streamed by deltas that never got its output_item.done",
		ref: "intended: llm/openai/responses_stream.go", reconcile: deltaOnlyText},
	{fixture: "reasoning-outside-output", name: "rein adds reasoning to output when total_tokens shows it was outside output_tokens (xAI)",
		ref: "intended: llm/openai/doc.go", reconcile: reasoningOutsideOutput},
}

func init() {
	responsesKnown = append(responsesKnown, estimatedFor("incomplete-other-reason", "items-only-in-final-response")...)
}

// TestResponsesStreams decodes every recorded Responses API stream with
// rein's adapter and with the SDK (Responses.NewStreaming) and compares the
// final message.
func TestResponsesStreams(t *testing.T) {
	totals := map[string]int{}
	for _, fx := range loadFixtures(t, "responses") {
		t.Run(fx.name, func(t *testing.T) {
			url := serveFixture(t, fx)
			req := &llm.Request{Model: openaiModel, Messages: []llm.Message{llm.UserText("hi")}}
			resp, err := runRein(t.Context(), rein.NewResponses(rein.Config{APIKey: testKey, BaseURL: url + "/v1"}), req)
			if err != nil {
				t.Fatalf("rein: %v", err)
			}
			ref, err := responsesSDKFinal(t, url)
			if sdkFailed(t, fx.name, err, responsesKnown, totals) {
				return
			}
			for k, n := range compareFinals(t, fx.name, reinFinal(resp), ref, responsesKnown) {
				totals[k] += n
			}
		})
	}
	logTotals(t, "responses", totals)
}

// responsesSDKFinal streams from url with the SDK and reads the reply.
func responsesSDKFinal(t *testing.T, url string) (final, error) {
	client := newOpenAISDK(url)
	stream := client.Responses.NewStreaming(t.Context(), responses.ResponseNewParams{Model: shared.ResponsesModel(openaiModel),
		Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("hi")}})
	defer stream.Close()
	var last responses.Response
	var done []responses.ResponseOutputItemUnion
	for stream.Next() {
		switch ev := stream.Current(); ev.Type {
		case "response.completed", "response.incomplete":
			last = ev.Response
		case "response.output_item.done":
			done = append(done, ev.Item)
		}
	}
	if err := stream.Err(); err != nil {
		return final{}, err
	}
	u := last.Usage
	f := final{ID: last.ID, Usage: usage{Input: u.InputTokens - u.InputTokensDetails.CachedTokens, Output: u.OutputTokens,
		CacheRead: u.InputTokensDetails.CachedTokens, Reasoning: u.OutputTokensDetails.ReasoningTokens}}
	items := last.Output
	if len(items) == 0 {
		items = done
	}
	calls, refusal := false, false
	for _, it := range items {
		switch it.Type {
		case "reasoning":
			var sum []string
			for _, s := range it.Summary {
				sum = append(sum, s.Text)
			}
			f.Blocks = append(f.Blocks, block{Kind: "thinking", ID: it.ID, Text: strings.Join(sum, "\n\n"), Signature: it.EncryptedContent})
		case "message":
			var text strings.Builder
			for _, c := range it.Content {
				text.WriteString(c.Text)
				text.WriteString(c.Refusal)
				refusal = refusal || c.Refusal != ""
			}
			if text.Len() > 0 {
				f.Blocks = append(f.Blocks, block{Kind: "text", Text: text.String()})
			}
		case "function_call":
			calls = true
			f.Blocks = append(f.Blocks, block{Kind: "tool_use", ID: it.CallID, Name: it.Name, Input: canonicalJSON([]byte(it.Arguments.OfString))})
		default:
			// rein keeps the item whole (llm.Opaque).
			f.Blocks = append(f.Blocks, block{Kind: it.Type, Input: canonicalJSON([]byte(it.RawJSON()))})
		}
	}
	f.Stop = responsesStop(string(last.Status), string(last.IncompleteDetails.Reason), calls, refusal)
	return f, nil
}

// responsesStop maps a response's status onto rein's stop reasons.
func responsesStop(status, reason string, calls, refusal bool) string {
	switch {
	case status == "incomplete" && reason == "max_output_tokens":
		return string(llm.StopMaxTokens)
	case status == "incomplete" && reason == "content_filter":
		return string(llm.StopRefusal)
	case status == "incomplete":
		return string(llm.StopUnknownOther)
	case calls:
		return string(llm.StopToolUse)
	case refusal:
		return string(llm.StopRefusal)
	case status == "completed":
		return string(llm.StopEndTurn)
	}
	return string(llm.StopUnknownOther)
}

// deltaOnlyText reconciles blocks rein built from deltas of items whose
// output_item.done never came (so the SDK side has none of them), and the
// stop reason they make: a call or a refusal.
func deltaOnlyText(rein, sdk *final) int {
	n := 0
	for _, b := range rein.Blocks {
		if (b.Kind == "text" || b.Kind == "tool_use") && !containsBlock(sdk.Blocks, b) {
			n++
		}
	}
	if n == 0 {
		return 0
	}
	sdk.Blocks, sdk.Stop = rein.Blocks, rein.Stop
	return n
}

// containsBlock reports whether bs holds b.
func containsBlock(bs []block, b block) bool {
	for _, x := range bs {
		if x == b {
			return true
		}
	}
	return false
}
