package openai

import (
	"context"
	"encoding/json"
	"iter"
	"strings"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/shared"

	"github.com/reinhq/rein/llm"
)

// Chat is a provider over the Chat Completions API of OpenAI or of any
// OpenAI-compatible server. It implements [llm.Provider] and
// [llm.AuthValidator].
type Chat struct {
	c   *client
	svc openai.ChatCompletionService
}

// NewChat returns a Chat Completions provider.
func NewChat(cfg Config) *Chat {
	c := newClient(cfg)
	return &Chat{c: c, svc: openai.NewChatCompletionService(c.opts...)}
}

// ValidateAuth checks the credentials by listing the models (SPEC PROV-4).
func (p *Chat) ValidateAuth(ctx context.Context) error { return p.c.validateAuth(ctx) }

// Stream sends req and yields the reply as it arrives (SPEC PROV-1).
func (p *Chat) Stream(ctx context.Context, req *llm.Request) iter.Seq2[llm.Delta, error] {
	return func(yield func(llm.Delta, error) bool) {
		params := p.params(req)
		res, err := p.c.open(ctx, func(opts ...option.RequestOption) error {
			_, err := p.svc.New(ctx, params, opts...)
			return err
		})
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
func (p *Chat) params(req *llm.Request) openai.ChatCompletionNewParams {
	out := openai.ChatCompletionNewParams{
		Model:         shared.ChatModel(req.Model),
		StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)},
	}
	if req.System != "" {
		out.Messages = append(out.Messages, openai.SystemMessage(req.System))
	}
	for _, m := range p.c.prepare(req) {
		if m.Role == llm.RoleAssistant {
			out.Messages = append(out.Messages, chatAssistant(m))
		} else {
			out.Messages = appendChatUser(out.Messages, m)
		}
	}
	for _, t := range req.Tools {
		out.Tools = append(out.Tools, openai.ChatCompletionFunctionTool(param.Override[shared.FunctionDefinitionParam](
			chatFunction{Name: t.Name, Description: t.Description, Parameters: toolSchema(t.InputSchema)})))
	}
	if req.MaxTokens > 0 {
		if p.c.openAI {
			out.MaxCompletionTokens = openai.Int(int64(req.MaxTokens))
		} else {
			out.MaxTokens = openai.Int(int64(req.MaxTokens))
		}
	}
	if req.Temperature != nil {
		out.Temperature = openai.Float(*req.Temperature)
	}
	if req.Thinking != nil {
		out.ReasoningEffort = shared.ReasoningEffort(effort(req.Thinking))
	}
	if req.CacheKey != "" && p.c.openAI {
		out.PromptCacheKey = openai.String(hashCacheKey(req.CacheKey))
	}
	if len(req.StopSequences) > 0 {
		out.Stop = openai.ChatCompletionNewParamsStopUnion{OfStringArray: req.StopSequences}
	}
	return out
}

// chatFunction is a function definition whose parameters are the tool's
// schema as given, key order kept.
type chatFunction struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters"`
}

// appendChatUser appends a user message: each tool result becomes a tool
// message (they must follow the assistant's tool calls), the rest one user
// message after them.
func appendChatUser(out []openai.ChatCompletionMessageParamUnion, m llm.Message) []openai.ChatCompletionMessageParamUnion {
	var parts []openai.ChatCompletionContentPartUnionParam
	for _, b := range m.Content {
		switch b := b.(type) {
		case *llm.ToolResult:
			out = append(out, openai.ToolMessage(toolResultText(b), b.ToolUseID))
		case *llm.Text:
			parts = append(parts, openai.TextContentPart(b.Text))
		case *llm.Image:
			parts = append(parts, openai.ImageContentPart(openai.ChatCompletionContentPartImageImageURLParam{URL: imageURL(b)}))
		}
	}
	switch {
	case len(parts) == 1 && parts[0].OfText != nil:
		// A plain string is what every compatible server understands.
		out = append(out, openai.UserMessage(parts[0].OfText.Text))
	case len(parts) > 0:
		out = append(out, openai.UserMessage(parts))
	}
	return out
}

// chatAssistant converts an assistant message. Visible reasoning goes back as
// reasoning_content, as DeepSeek and other reasoning servers take it, and
// OpenRouter's reasoning_details (kept as the thinking's signature) go back
// verbatim; OpenAI never produces either, so it never receives them.
func chatAssistant(m llm.Message) openai.ChatCompletionMessageParamUnion {
	var text, reasoning strings.Builder
	var details json.RawMessage
	a := openai.ChatCompletionAssistantMessageParam{}
	for _, b := range m.Content {
		switch b := b.(type) {
		case *llm.Text:
			text.WriteString(b.Text)
		case *llm.Thinking:
			if !b.Redacted {
				reasoning.WriteString(b.Text)
			}
			if strings.HasPrefix(b.Signature, "[") && json.Valid([]byte(b.Signature)) {
				details = json.RawMessage(b.Signature)
			}
		case *llm.ToolUse:
			args := string(b.Input)
			if strings.TrimSpace(args) == "" {
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
	extra := map[string]any{}
	if reasoning.Len() > 0 {
		extra["reasoning_content"] = reasoning.String()
	}
	if details != nil {
		extra["reasoning_details"] = details
	}
	if len(extra) > 0 {
		a.SetExtraFields(extra)
	}
	return openai.ChatCompletionMessageParamUnion{OfAssistant: &a}
}
