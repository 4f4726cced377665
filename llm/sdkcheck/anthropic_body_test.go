package sdkcheck_test

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"testing"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/anthropics/anthropic-sdk-go/v2/packages/param"

	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/llm/anthropic"
)

// The Anthropic Messages API (SPEC PROV-2): rein's body for each request of
// requestTable against the body anthropic-sdk-go writes for the same
// request, built below with the SDK's own types.

const anthropicModel = "claude-sonnet-4-5"

// anthropicReply is a minimal stream that ends a request cleanly.
const anthropicReply = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_0\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"m\",\"content\":[],\"stop_reason\":null,\"usage\":{\"input_tokens\":1,\"output_tokens\":1}}}\n\n" +
	"event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":1}}\n\n" +
	"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"

// newAnthropicSDK returns an SDK client for base that reads nothing from the
// environment and never retries.
func newAnthropicSDK(base string) sdk.Client {
	return sdk.NewClient(option.WithoutEnvironmentDefaults(), option.WithBaseURL(base),
		option.WithAPIKey(testKey), option.WithMaxRetries(0))
}

func TestAnthropicRequestBodies(t *testing.T) {
	for _, row := range requestTable(anthropicModel, "anthropic") {
		t.Run(row.name, func(t *testing.T) {
			srv := newCaptureServer(t, "text/event-stream", anthropicReply)
			p := anthropic.New(anthropic.Config{APIKey: testKey, BaseURL: srv.URL})
			if _, err := runRein(t.Context(), p, row.req); err != nil {
				t.Fatalf("rein: %v", err)
			}
			rein := srv.take(t, "rein")

			client := newAnthropicSDK(srv.URL)
			stream := client.Messages.NewStreaming(t.Context(), anthropicParams(t, row.req))
			for stream.Next() {
			}
			if err := stream.Err(); err != nil {
				t.Fatalf("SDK: %v", err)
			}
			_ = stream.Close()
			ref := srv.take(t, "the SDK")

			comparePlumbing(t, rein, ref, "anthropic-version", "Content-Type")
			compareBodies(t, "anthropic", rein.Body, ref.Body)
		})
	}
}

// comparePlumbing checks that both went to the same endpoint with the same
// named headers.
func comparePlumbing(t *testing.T, rein, ref captured, headers ...string) {
	t.Helper()
	if rein.Method != ref.Method || rein.Path != ref.Path || rein.Query != ref.Query {
		t.Errorf("endpoint: rein %s %s?%s, SDK %s %s?%s", rein.Method, rein.Path, rein.Query, ref.Method, ref.Path, ref.Query)
	}
	for _, h := range headers {
		if rein.Header.Get(h) != ref.Header.Get(h) {
			t.Errorf("header %s: rein %q, SDK %q", h, rein.Header.Get(h), ref.Header.Get(h))
		}
	}
}

// anthropicParams is req as the SDK's MessageNewParams, following what
// rein's adapter documents (llm/anthropic/doc.go): max_tokens 8192 unless
// set, raised by the thinking budget when not above it; budget at least
// 1024; cache breakpoints on the last tool, the system prompt and the last
// cacheable block of the newest two messages; empty text and unsigned
// thinking left out. The rows' histories all come from the requested
// model, so none of it is dropped as another model's.
func anthropicParams(t *testing.T, req *llm.Request) sdk.MessageNewParams {
	t.Helper()
	eph := sdk.NewCacheControlEphemeralParam()
	p := sdk.MessageNewParams{Model: sdk.Model(req.Model), MaxTokens: int64(req.MaxTokens), StopSequences: req.StopSequences}
	if p.MaxTokens == 0 {
		p.MaxTokens = 8192
	}
	if th := req.Thinking; th != nil {
		budget := int64(th.BudgetTokens)
		if budget == 0 {
			budget = map[string]int64{"low": 1024, "medium": 4096, "high": 16384, "": 4096}[th.Effort]
		}
		budget = max(budget, 1024)
		if p.MaxTokens <= budget {
			p.MaxTokens += budget
		}
		p.Thinking = sdk.ThinkingConfigParamUnion{OfEnabled: &sdk.ThinkingConfigEnabledParam{BudgetTokens: budget}}
	}
	if req.System != "" {
		p.System = []sdk.TextBlockParam{{Text: req.System, CacheControl: eph}}
	}
	for i, tl := range req.Tools {
		tool := sdk.ToolParam{Name: tl.Name, InputSchema: anthropicSchema(t, tl.InputSchema)}
		if tl.Description != "" {
			tool.Description = param.NewOpt(tl.Description)
		}
		if i == len(req.Tools)-1 {
			tool.CacheControl = eph
		}
		p.Tools = append(p.Tools, sdk.ToolUnionParam{OfTool: &tool})
	}
	p.Messages = []sdk.MessageParam{}
	for i, m := range req.Messages {
		var blocks []sdk.ContentBlockParamUnion
		for _, b := range m.Content {
			switch b := b.(type) {
			case *llm.Text:
				if b.Text != "" {
					blocks = append(blocks, sdk.NewTextBlock(b.Text))
				}
			case *llm.Image:
				blocks = append(blocks, sdk.ContentBlockParamUnion{OfImage: anthropicImage(b)})
			case *llm.Thinking:
				switch {
				case m.Role != llm.RoleAssistant || b.Signature == "":
				case b.Redacted:
					blocks = append(blocks, sdk.NewRedactedThinkingBlock(b.Signature))
				default:
					blocks = append(blocks, sdk.NewThinkingBlock(b.Signature, b.Text))
				}
			case *llm.ToolUse:
				var input any = map[string]any{}
				if len(b.Input) > 0 {
					input = json.RawMessage(b.Input)
				}
				blocks = append(blocks, sdk.ContentBlockParamUnion{OfToolUse: &sdk.ToolUseBlockParam{ID: b.ID, Name: b.Name, Input: input}})
			case *llm.ToolResult:
				r := &sdk.ToolResultBlockParam{ToolUseID: b.ToolUseID}
				if b.IsError {
					r.IsError = param.NewOpt(true)
				}
				for _, c := range b.Content {
					switch c := c.(type) {
					case *llm.Text:
						if c.Text != "" {
							r.Content = append(r.Content, sdk.ToolResultBlockParamContentUnion{OfText: &sdk.TextBlockParam{Text: c.Text}})
						}
					case *llm.Image:
						r.Content = append(r.Content, sdk.ToolResultBlockParamContentUnion{OfImage: anthropicImage(c)})
					}
				}
				blocks = append(blocks, sdk.ContentBlockParamUnion{OfToolResult: r})
			case *llm.Opaque:
				// A block of the model's turn rein keeps whole: read into the
				// SDK's own type for it, to be written back by the SDK.
				var u sdk.ContentBlockParamUnion
				if err := u.UnmarshalJSON(b.Raw); err != nil {
					t.Fatalf("SDK: %s block: %v", b.Type, err)
				}
				blocks = append(blocks, u)
			default:
				t.Fatalf("no SDK form for %T", b)
			}
		}
		if i >= len(req.Messages)-2 {
			anthropicMarkLast(blocks, eph)
		}
		if m.Role == llm.RoleAssistant {
			p.Messages = append(p.Messages, sdk.NewAssistantMessage(blocks...))
		} else {
			p.Messages = append(p.Messages, sdk.NewUserMessage(blocks...))
		}
	}
	return p
}

// anthropicSchema is a tool's JSON Schema in the SDK's typed form:
// properties and required in their fields, the rest as extra fields.
func anthropicSchema(t *testing.T, raw json.RawMessage) sdk.ToolInputSchemaParam {
	t.Helper()
	// An empty schema is {"type":"object"}: the API requires input_schema.
	s := sdk.ToolInputSchemaParam{Type: "object"}
	if len(raw) == 0 {
		return s
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("schema %s: %v", raw, err)
	}
	if v, ok := m["properties"]; ok {
		s.Properties = v
		delete(m, "properties")
	}
	if v, ok := m["required"]; ok {
		if err := json.Unmarshal(v, &s.Required); err != nil {
			t.Fatal(err)
		}
		delete(m, "required")
	}
	delete(m, "type") // the SDK writes "type":"object" itself
	if len(m) > 0 {
		s.ExtraFields = map[string]any{}
		for k, v := range m {
			s.ExtraFields[k] = v
		}
	}
	return s
}

// anthropicImage is an image block: base64 bytes with their media type
// (sniffed when not given), or a URL.
func anthropicImage(img *llm.Image) *sdk.ImageBlockParam {
	if len(img.Data) == 0 {
		return &sdk.ImageBlockParam{Source: sdk.ImageBlockParamSourceUnion{OfURL: &sdk.URLImageSourceParam{URL: img.URL}}}
	}
	mt := img.MediaType
	if mt == "" {
		mt = http.DetectContentType(img.Data)
	}
	return &sdk.ImageBlockParam{Source: sdk.ImageBlockParamSourceUnion{OfBase64: &sdk.Base64ImageSourceParam{
		Data: base64.StdEncoding.EncodeToString(img.Data), MediaType: sdk.Base64ImageSourceMediaType(mt)}}}
}

// anthropicMarkLast puts a breakpoint on the last block that can carry one.
func anthropicMarkLast(blocks []sdk.ContentBlockParamUnion, eph sdk.CacheControlEphemeralParam) {
	for i := len(blocks) - 1; i >= 0; i-- {
		switch b := &blocks[i]; {
		case b.OfText != nil:
			b.OfText.CacheControl = eph
		case b.OfImage != nil:
			b.OfImage.CacheControl = eph
		case b.OfToolUse != nil:
			b.OfToolUse.CacheControl = eph
		case b.OfToolResult != nil:
			b.OfToolResult.CacheControl = eph
		default:
			continue
		}
		return
	}
}
