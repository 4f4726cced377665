package openai

import (
	"context"
	"encoding/json"
	"iter"

	"github.com/reinhq/rein/llm"
)

// Responses is a provider over OpenAI's Responses API. It keeps no state on
// the server (store=false): reasoning travels back as encrypted content. The
// API has no stop sequences, so Request.StopSequences is ignored. It
// implements [llm.Provider] and [llm.AuthValidator].
type Responses struct {
	c *client
}

// NewResponses returns a Responses API provider.
func NewResponses(cfg Config) *Responses {
	return &Responses{c: newClient(cfg)}
}

// ValidateAuth checks the credentials by listing the models (SPEC PROV-4).
func (p *Responses) ValidateAuth(ctx context.Context) error { return p.c.validateAuth(ctx) }

// Stream sends req and yields the reply as it arrives (SPEC PROV-1).
func (p *Responses) Stream(ctx context.Context, req *llm.Request) iter.Seq2[llm.Delta, error] {
	return func(yield func(llm.Delta, error) bool) {
		res, err := p.c.open(ctx, "responses", p.params(req))
		if err != nil {
			yield(llm.Delta{}, err)
			return
		}
		defer res.Body.Close()
		s := newRespState(p.c, req, yield)
		var done bool
		if isJSON(res) {
			var body []byte
			if body, err = p.c.readAll(ctx, res); err == nil {
				err = s.whole(body)
				done = true
			}
		} else {
			done, err = p.c.events(ctx, res, s.event)
		}
		switch {
		case err == errStopped:
			return
		case err != nil:
			yield(llm.Delta{}, err)
			return
		case !done:
			yield(llm.Delta{}, llm.StreamCut(p.c.name, "response.completed"))
			return
		}
		yield(llm.Delta{Kind: llm.DeltaDone, Response: s.response()}, nil)
	}
}

// params serialises req deterministically (SPEC PROV-6): the same request
// gives the same bytes, and a new message only extends "input".
func (p *Responses) params(req *llm.Request) *respRequest {
	out := &respRequest{Model: req.Model, Store: false, Include: []string{"reasoning.encrypted_content"},
		Instructions: req.System, Stream: true}
	for _, m := range p.c.prepare(req) {
		if m.Role == llm.RoleAssistant {
			out.Input = appendRespAssistant(out.Input, m)
		} else {
			out.Input = appendRespUser(out.Input, m)
		}
	}
	for _, t := range req.Tools {
		out.Tools = append(out.Tools, respFunction{Type: "function", Name: t.Name,
			Description: t.Description, Parameters: toolSchema(t.InputSchema)})
	}
	if req.MaxTokens > 0 {
		out.MaxOutputTokens = int64(req.MaxTokens)
	}
	out.Temperature = req.Temperature
	if req.Thinking != nil {
		out.Reasoning = &respReasoning{Effort: effort(req.Thinking), Summary: "auto"}
	}
	if req.CacheKey != "" && p.c.openAI {
		out.PromptCacheKey = hashCacheKey(req.CacheKey)
	}
	return out
}

// appendRespUser appends a user message: each tool result becomes a
// function_call_output item, the rest one user message after them.
func appendRespUser(items []any, m llm.Message) []any {
	var parts []any
	for _, b := range m.Content {
		switch b := b.(type) {
		case *llm.ToolResult:
			items = append(items, respFunctionCallOutput{Output: toolResultText(b), CallID: b.ToolUseID,
				Type: "function_call_output"})
		case *llm.Text:
			parts = append(parts, respInputText{Text: b.Text, Type: "input_text"})
		case *llm.Image:
			parts = append(parts, respInputImage{Detail: "auto", ImageURL: imageURL(b), Type: "input_image"})
		}
	}
	if len(parts) > 0 {
		items = append(items, respMessage{Content: parts, Role: "user", Type: "message"})
	}
	return items
}

// appendRespAssistant appends an assistant message's items in order: a
// reasoning item per thinking block that can be replayed (it needs its id and
// encrypted content, as nothing is stored), an output message per text, a
// function_call per tool use, an opaque block's item byte for byte.
func appendRespAssistant(items []any, m llm.Message) []any {
	for _, b := range m.Content {
		switch b := b.(type) {
		case *llm.Thinking:
			if b.ID == "" || b.Signature == "" {
				continue
			}
			r := respReasoningItem{ID: b.ID, EncryptedContent: b.Signature, Summary: []respSummary{}, Type: "reasoning"}
			if b.Text != "" {
				r.Summary = append(r.Summary, respSummary{Text: b.Text, Type: "summary_text"})
			}
			items = append(items, r)
		case *llm.Text:
			items = append(items, respMessage{Role: "assistant", Type: "message",
				Content: []any{respOutputText{Annotations: []struct{}{}, Text: b.Text, Type: "output_text"}}})
		case *llm.ToolUse:
			args := string(b.Input)
			if len(args) == 0 {
				args = "{}"
			}
			items = append(items, respFunctionCall{Arguments: args, CallID: b.ID, Name: b.Name, Type: "function_call"})
		case *llm.Opaque:
			// A server-side tool's item (web_search_call …) or one rein does
			// not model, as the API sent it; history was prepared, so it is
			// this provider's (PROV-5). One that fails its check is left out.
			if b.Check() != nil {
				llm.RecordDrop(m.Provider, llm.DropReplay, b.Type)
				continue
			}
			items = append(items, rawItem(b.Raw))
		}
	}
	return items
}

// rawItem is an opaque output item replayed as the bytes it was stored as:
// they are in normal form (llm.NormalizeOpaque), which encoding/json leaves
// as it is.
type rawItem json.RawMessage

// MarshalJSON returns the stored bytes.
func (r rawItem) MarshalJSON() ([]byte, error) { return r, nil }
