package openai

import (
	"context"
	"encoding/json"
	"iter"
	"strings"

	"github.com/reinhq/rein/llm"
)

// Chat is a provider over the Chat Completions API of OpenAI or of any
// OpenAI-compatible server. It implements [llm.Provider] and
// [llm.AuthValidator].
type Chat struct {
	c *client
}

// NewChat returns a Chat Completions provider.
func NewChat(cfg Config) *Chat {
	return &Chat{c: newClient(cfg)}
}

// ValidateAuth checks the credentials by listing the models (SPEC PROV-4).
func (p *Chat) ValidateAuth(ctx context.Context) error { return p.c.validateAuth(ctx) }

// Stream sends req and yields the reply as it arrives (SPEC PROV-1).
func (p *Chat) Stream(ctx context.Context, req *llm.Request) iter.Seq2[llm.Delta, error] {
	return func(yield func(llm.Delta, error) bool) {
		res, err := p.c.open(ctx, "chat/completions", p.params(req))
		if err != nil {
			yield(llm.Delta{}, err)
			return
		}
		defer res.Body.Close()
		s := newChatState(p.c, req, yield)
		if isJSON(res) {
			body, err := p.c.readAll(ctx, res)
			if err == nil {
				err = s.whole(body)
			}
			if err != nil {
				if err != errStopped {
					yield(llm.Delta{}, err)
				}
				return
			}
			yield(llm.Delta{Kind: llm.DeltaDone, Response: s.response()}, nil)
			return
		}
		done, err := p.c.events(ctx, res, s.event)
		switch {
		case err == errStopped:
			return
		case err != nil:
			yield(llm.Delta{}, err)
			return
		case !done && s.finish == "":
			// A finish reason without [DONE] is accepted: some compatible
			// servers end there. Without either, the stream was cut.
			yield(llm.Delta{}, llm.StreamCut(p.c.name, "data: [DONE]"))
			return
		}
		if !s.startPending() {
			return
		}
		yield(llm.Delta{Kind: llm.DeltaDone, Response: s.response()}, nil)
	}
}

// params serialises req deterministically (SPEC PROV-6): the same request
// gives the same bytes, and a new message only extends "messages".
func (p *Chat) params(req *llm.Request) *chatRequest {
	out := &chatRequest{Model: req.Model, StreamOptions: chatStreamOptions{IncludeUsage: true}, Stream: true}
	if req.System != "" {
		out.Messages = append(out.Messages, chatMessage{Content: req.System, Role: "system"})
	}
	for _, m := range p.c.prepare(req) {
		if m.Role == llm.RoleAssistant {
			out.Messages = append(out.Messages, chatAssistant(m, p.c.openAI))
		} else {
			out.Messages = appendChatUser(out.Messages, m)
		}
	}
	for _, t := range req.Tools {
		out.Tools = append(out.Tools, chatTool{Type: "function",
			Function: chatFunction{Name: t.Name, Description: t.Description, Parameters: toolSchema(t.InputSchema)}})
	}
	if req.MaxTokens > 0 {
		if p.c.openAI {
			out.MaxCompletionTokens = int64(req.MaxTokens)
		} else {
			out.MaxTokens = int64(req.MaxTokens)
		}
	}
	out.Temperature = req.Temperature
	if req.Thinking != nil {
		out.ReasoningEffort = effort(req.Thinking)
	}
	if req.CacheKey != "" && p.c.openAI {
		out.PromptCacheKey = hashCacheKey(req.CacheKey)
	}
	if len(req.StopSequences) > 0 {
		out.Stop = req.StopSequences
	}
	return out
}

// appendChatUser appends a user message: each tool result becomes a tool
// message (they must follow the assistant's tool calls), the rest one user
// message after them.
func appendChatUser(out []chatMessage, m llm.Message) []chatMessage {
	var parts []chatPart
	for _, b := range m.Content {
		switch b := b.(type) {
		case *llm.ToolResult:
			id := b.ToolUseID
			out = append(out, chatMessage{Content: toolResultText(b), ToolCallID: &id, Role: "tool"})
		case *llm.Text:
			parts = append(parts, chatTextPart{Text: b.Text, Type: "text"})
		case *llm.Image:
			parts = append(parts, chatImagePart{ImageURL: chatImageURL{URL: imageURL(b)}, Type: "image_url"})
		}
	}
	if len(parts) == 1 {
		if t, ok := parts[0].(chatTextPart); ok {
			// A plain string is what every compatible server understands.
			return append(out, chatMessage{Content: t.Text, Role: "user"})
		}
	}
	if len(parts) > 0 {
		out = append(out, chatMessage{Content: parts, Role: "user"})
	}
	return out
}

// chatAssistant converts an assistant message. Visible reasoning goes back as
// reasoning_content, as DeepSeek and other reasoning servers take it, and
// OpenRouter's reasoning_details (kept as the thinking's signature) go back
// verbatim. OpenAI itself (openAI) gets no reasoning_content, a field its
// Chat Completions API does not have: a history the Responses adapter
// wrote under the same provider name holds reasoning summaries, and they
// stay out (found by llm/sdkcheck).
func chatAssistant(m llm.Message, openAI bool) chatMessage {
	var text, reasoning strings.Builder
	a := chatMessage{Role: "assistant"}
	for _, b := range m.Content {
		switch b := b.(type) {
		case *llm.Text:
			text.WriteString(b.Text)
		case *llm.Thinking:
			if !b.Redacted {
				reasoning.WriteString(b.Text)
			}
			if strings.HasPrefix(b.Signature, "[") && json.Valid([]byte(b.Signature)) {
				a.ReasoningDetails = extraRaw(b.Signature)
			}
		case *llm.ToolUse:
			args := string(b.Input)
			if strings.TrimSpace(args) == "" {
				args = "{}"
			}
			a.ToolCalls = append(a.ToolCalls, chatCallParam{ID: b.ID, Type: "function",
				Function: chatCallFunction{Name: b.Name, Arguments: args}})
		case *llm.Opaque:
			// Chat Completions has no place for another API's items (a
			// Responses web_search_call under the same provider name).
			llm.RecordDrop(m.Provider, llm.DropReplay, b.Type)
		}
	}
	if text.Len() > 0 || len(a.ToolCalls) == 0 {
		a.Content = text.String()
	}
	if !openAI {
		a.ReasoningContent = extraString(reasoning.String())
	}
	return a
}
