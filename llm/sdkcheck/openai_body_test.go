package sdkcheck_test

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"
	"github.com/openai/openai-go/v3/shared"

	"github.com/reinhq/rein/llm"
	rein "github.com/reinhq/rein/llm/openai"
)

// OpenAI's Chat Completions and Responses APIs (SPEC PROV-2): rein's body
// for each request of requestTable against the body openai-go writes for
// the same request, built below with the SDK's own types.

const openaiModel = "gpt-5"

// Minimal replies that end a request cleanly.
const (
	chatReply      = "data: {\"id\":\"c0\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"ok\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n"
	responsesReply = "event: response.completed\ndata: {\"type\":\"response.completed\",\"sequence_number\":0,\"response\":{\"id\":\"r0\",\"object\":\"response\",\"status\":\"completed\",\"output\":[],\"usage\":{\"input_tokens\":1,\"output_tokens\":1}}}\n\n"
)

// newOpenAISDK returns an SDK client for base that never retries; the
// options given override whatever OPENAI_* variables hold.
func newOpenAISDK(base string) openai.Client {
	return openai.NewClient(option.WithBaseURL(base+"/v1/"), option.WithAPIKey(testKey), option.WithMaxRetries(0),
		option.WithOrganization(""), option.WithProject(""))
}

// chatProviders are the two ways rein speaks Chat Completions: to OpenAI,
// and to an OpenAI-compatible server (which gets max_tokens, no
// prompt_cache_key, and visible reasoning back as reasoning_content).
var chatProviders = []struct{ name, model string }{{"openai", openaiModel}, {"deepseek", "deepseek-reasoner"}}

func TestChatRequestBodies(t *testing.T) {
	for _, prov := range chatProviders {
		for _, row := range requestTable(prov.model, prov.name) {
			t.Run(prov.name+"/"+row.name, func(t *testing.T) {
				srv := newCaptureServer(t, "text/event-stream", chatReply)
				p := rein.NewChat(rein.Config{APIKey: testKey, BaseURL: srv.URL + "/v1", Name: prov.name})
				if _, err := runRein(t.Context(), p, row.req); err != nil {
					t.Fatalf("rein: %v", err)
				}
				got := srv.take(t, "rein")

				client := newOpenAISDK(srv.URL)
				stream := client.Chat.Completions.NewStreaming(t.Context(), chatParams(t, row.req, prov.name == "openai"))
				for stream.Next() {
				}
				if err := stream.Err(); err != nil {
					t.Fatalf("SDK: %v", err)
				}
				_ = stream.Close()
				ref := srv.take(t, "the SDK")

				comparePlumbing(t, got, ref, "Content-Type")
				compareBodies(t, "chat", got.Body, ref.Body)
			})
		}
	}
}

func TestResponsesRequestBodies(t *testing.T) {
	for _, row := range requestTable(openaiModel, "openai") {
		t.Run(row.name, func(t *testing.T) {
			srv := newCaptureServer(t, "text/event-stream", responsesReply)
			p := rein.NewResponses(rein.Config{APIKey: testKey, BaseURL: srv.URL + "/v1"})
			if _, err := runRein(t.Context(), p, row.req); err != nil {
				t.Fatalf("rein: %v", err)
			}
			got := srv.take(t, "rein")

			client := newOpenAISDK(srv.URL)
			stream := client.Responses.NewStreaming(t.Context(), responsesParams(t, row.req))
			for stream.Next() {
			}
			if err := stream.Err(); err != nil {
				t.Fatalf("SDK: %v", err)
			}
			_ = stream.Close()
			ref := srv.take(t, "the SDK")

			comparePlumbing(t, got, ref, "Content-Type")
			compareBodies(t, "responses", got.Body, ref.Body)
		})
	}
}

// chatParams is req as the SDK's ChatCompletionNewParams, following what
// llm/openai/doc.go documents: the system prompt first; a user turn's
// tool results as tool messages before its text and images (a lone text
// as a plain string); an assistant turn's text joined, its calls as
// tool_calls; failed results prefixed "[error] "; effort derived from a
// budget; the cache key hashed when longer than 64.
func chatParams(t *testing.T, req *llm.Request, isOpenAI bool) openai.ChatCompletionNewParams {
	t.Helper()
	p := openai.ChatCompletionNewParams{Model: shared.ChatModel(req.Model),
		StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}}
	if req.System != "" {
		p.Messages = append(p.Messages, openai.SystemMessage(req.System))
	}
	for _, m := range llm.MoveToolResultImages(req.Messages) {
		if m.Role == llm.RoleAssistant {
			p.Messages = append(p.Messages, chatAssistant(m, isOpenAI))
			continue
		}
		var parts []openai.ChatCompletionContentPartUnionParam
		for _, b := range m.Content {
			switch b := b.(type) {
			case *llm.ToolResult:
				p.Messages = append(p.Messages, openai.ToolMessage(resultText(b), b.ToolUseID))
			case *llm.Text:
				parts = append(parts, openai.TextContentPart(b.Text))
			case *llm.Image:
				parts = append(parts, openai.ImageContentPart(openai.ChatCompletionContentPartImageImageURLParam{URL: dataURL(b)}))
			}
		}
		switch {
		case len(parts) == 1 && parts[0].OfText != nil:
			p.Messages = append(p.Messages, openai.UserMessage(parts[0].OfText.Text))
		case len(parts) > 0:
			p.Messages = append(p.Messages, openai.UserMessage(parts))
		}
	}
	for _, tl := range req.Tools {
		fn := shared.FunctionDefinitionParam{Name: tl.Name, Parameters: schemaMap(t, tl.InputSchema)}
		if tl.Description != "" {
			fn.Description = openai.String(tl.Description)
		}
		p.Tools = append(p.Tools, openai.ChatCompletionFunctionTool(fn))
	}
	if req.MaxTokens > 0 {
		if isOpenAI {
			p.MaxCompletionTokens = openai.Int(int64(req.MaxTokens))
		} else {
			p.MaxTokens = openai.Int(int64(req.MaxTokens))
		}
	}
	if req.Temperature != nil {
		p.Temperature = openai.Float(*req.Temperature)
	}
	if req.Thinking != nil {
		p.ReasoningEffort = shared.ReasoningEffort(reasoningEffort(req.Thinking))
	}
	if req.CacheKey != "" && isOpenAI {
		p.PromptCacheKey = openai.String(cacheKey(req.CacheKey))
	}
	if len(req.StopSequences) > 0 {
		p.Stop = openai.ChatCompletionNewParamsStopUnion{OfStringArray: req.StopSequences}
	}
	return p
}

// chatAssistant is an assistant turn: its text (empty only when it has no
// calls), its calls, and, to servers other than OpenAI, its visible
// reasoning as reasoning_content, a field OpenAI's API does not have (an
// extra field of the SDK's).
func chatAssistant(m llm.Message, isOpenAI bool) openai.ChatCompletionMessageParamUnion {
	var text, reasoning strings.Builder
	a := openai.ChatCompletionAssistantMessageParam{}
	for _, b := range m.Content {
		switch b := b.(type) {
		case *llm.Text:
			text.WriteString(b.Text)
		case *llm.Thinking:
			if !b.Redacted {
				reasoning.WriteString(b.Text)
			}
		case *llm.ToolUse:
			args := string(b.Input)
			if args == "" {
				args = "{}"
			}
			a.ToolCalls = append(a.ToolCalls, openai.ChatCompletionMessageToolCallUnionParam{
				OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{ID: b.ID,
					Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{Name: b.Name, Arguments: args}}})
		}
	}
	if text.Len() > 0 || len(a.ToolCalls) == 0 {
		a.Content.OfString = openai.String(text.String())
	}
	if reasoning.Len() > 0 && !isOpenAI {
		a.SetExtraFields(map[string]any{"reasoning_content": reasoning.String()})
	}
	return openai.ChatCompletionMessageParamUnion{OfAssistant: &a}
}

// responsesParams is req as the SDK's ResponseNewParams (llm/openai/doc.go):
// store false with the encrypted reasoning included; instructions for the
// system prompt; tool results as function_call_output items before the
// turn's message; an assistant turn's reasoning (with an id and encrypted
// content), text and calls as items in order; tools not strict; no stop
// sequences (the API has none).
func responsesParams(t *testing.T, req *llm.Request) responses.ResponseNewParams {
	t.Helper()
	p := responses.ResponseNewParams{Model: shared.ResponsesModel(req.Model), Store: openai.Bool(false),
		Include: []responses.ResponseIncludable{responses.ResponseIncludableReasoningEncryptedContent}}
	if req.System != "" {
		p.Instructions = openai.String(req.System)
	}
	var items responses.ResponseInputParam
	for _, m := range llm.MoveToolResultImages(req.Messages) {
		if m.Role == llm.RoleAssistant {
			items = responsesAssistant(t, items, m)
			continue
		}
		var parts responses.ResponseInputMessageContentListParam
		for _, b := range m.Content {
			switch b := b.(type) {
			case *llm.ToolResult:
				items = append(items, responses.ResponseInputItemUnionParam{OfFunctionCallOutput: &responses.ResponseInputItemFunctionCallOutputParam{
					CallID: openai.String(b.ToolUseID),
					Output: responses.ResponseInputItemFunctionCallOutputOutputUnionParam{OfString: openai.String(resultText(b))}}})
			case *llm.Text:
				parts = append(parts, responses.ResponseInputContentParamOfInputText(b.Text))
			case *llm.Image:
				parts = append(parts, responses.ResponseInputContentUnionParam{OfInputImage: &responses.ResponseInputImageParam{
					ImageURL: openai.String(dataURL(b)), Detail: responses.ResponseInputImageDetailAuto}})
			}
		}
		if len(parts) > 0 {
			items = append(items, responses.ResponseInputItemUnionParam{OfMessage: &responses.EasyInputMessageParam{
				Role: responses.EasyInputMessageRoleUser, Type: responses.EasyInputMessageTypeMessage,
				Content: responses.EasyInputMessageContentUnionParam{OfInputItemContentList: parts}}})
		}
	}
	p.Input = responses.ResponseNewParamsInputUnion{OfInputItemList: items}
	for _, tl := range req.Tools {
		fn := responses.FunctionToolParam{Name: tl.Name, Parameters: schemaMap(t, tl.InputSchema), Strict: openai.Bool(false)}
		if tl.Description != "" {
			fn.Description = openai.String(tl.Description)
		}
		p.Tools = append(p.Tools, responses.ToolUnionParam{OfFunction: &fn})
	}
	if req.MaxTokens > 0 {
		p.MaxOutputTokens = openai.Int(int64(req.MaxTokens))
	}
	if req.Temperature != nil {
		p.Temperature = openai.Float(*req.Temperature)
	}
	if req.Thinking != nil {
		p.Reasoning = shared.ReasoningParam{Effort: shared.ReasoningEffort(reasoningEffort(req.Thinking)), Summary: shared.ReasoningSummaryAuto}
	}
	if req.CacheKey != "" {
		p.PromptCacheKey = openai.String(cacheKey(req.CacheKey))
	}
	return p
}

// responsesAssistant appends an assistant turn's items. An output message
// goes without id and status, which the SDK marks required but omits when
// zero: with store=false there is no stored item to name.
func responsesAssistant(t *testing.T, items responses.ResponseInputParam, m llm.Message) responses.ResponseInputParam {
	t.Helper()
	for _, b := range m.Content {
		switch b := b.(type) {
		case *llm.Thinking:
			if b.ID == "" || b.Signature == "" {
				continue
			}
			r := &responses.ResponseReasoningItemParam{ID: b.ID, EncryptedContent: openai.String(b.Signature),
				Summary: []responses.ResponseReasoningItemSummaryParam{}}
			if b.Text != "" {
				r.Summary = append(r.Summary, responses.ResponseReasoningItemSummaryParam{Text: b.Text})
			}
			items = append(items, responses.ResponseInputItemUnionParam{OfReasoning: r})
		case *llm.Text:
			items = append(items, responses.ResponseInputItemUnionParam{OfOutputMessage: &responses.ResponseOutputMessageParam{
				Content: []responses.ResponseOutputMessageContentUnionParam{{OfOutputText: &responses.ResponseOutputTextParam{
					Text: b.Text, Annotations: []responses.ResponseOutputTextAnnotationUnionParam{}}}}}})
		case *llm.ToolUse:
			args := string(b.Input)
			if args == "" {
				args = "{}"
			}
			items = append(items, responses.ResponseInputItemParamOfFunctionCall(args, b.ID, b.Name))
		case *llm.Opaque:
			// An item rein keeps whole (a server tool's call): read into the
			// SDK's own type for it, to be written back by the SDK.
			var it responses.ResponseInputItemUnionParam
			if err := it.UnmarshalJSON(b.Raw); err != nil {
				t.Fatalf("SDK: %s item: %v", b.Type, err)
			}
			items = append(items, it)
		}
	}
	return items
}

// schemaMap is a tool's JSON Schema as the SDK's map; an empty schema is an
// object without properties.
func schemaMap(t *testing.T, raw json.RawMessage) map[string]any {
	t.Helper()
	if len(raw) == 0 {
		return map[string]any{"type": "object", "properties": map[string]any{}}
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("schema %s: %v", raw, err)
	}
	return m
}

// resultText is a tool result as both OpenAI APIs take it: its texts joined
// by newlines, prefixed "[error] " when it failed (neither has is_error).
func resultText(r *llm.ToolResult) string {
	var texts []string
	for _, b := range r.Content {
		if t, ok := b.(*llm.Text); ok {
			texts = append(texts, t.Text)
		}
	}
	s := strings.Join(texts, "\n")
	if r.IsError {
		s = "[error] " + s
	}
	return s
}

// dataURL is an image as a data: URL (its type sniffed when not given), or
// its URL.
func dataURL(img *llm.Image) string {
	if len(img.Data) == 0 {
		return img.URL
	}
	mt := img.MediaType
	if mt == "" {
		mt = http.DetectContentType(img.Data)
	}
	return "data:" + mt + ";base64," + base64.StdEncoding.EncodeToString(img.Data)
}

// reasoningEffort is the effort for t: its Effort, else one derived from
// its budget.
func reasoningEffort(t *llm.ThinkingConfig) string {
	switch {
	case t.Effort != "":
		return t.Effort
	case t.BudgetTokens <= 0, t.BudgetTokens >= 4096 && t.BudgetTokens < 16384:
		return "medium"
	case t.BudgetTokens < 4096:
		return "low"
	}
	return "high"
}

// cacheKey is a prompt_cache_key: the key, or the first 64 hex digits of
// its SHA-256 when it is longer than the 64 OpenAI accepts.
func cacheKey(k string) string {
	if len(k) <= 64 {
		return k
	}
	sum := sha256.Sum256([]byte(k))
	return hex.EncodeToString(sum[:])[:64]
}
