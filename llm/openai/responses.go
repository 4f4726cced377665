package openai

import (
	"context"
	"encoding/json"
	"iter"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/responses"
	"github.com/openai/openai-go/v3/shared"

	"github.com/reinhq/rein/llm"
)

// Responses is a provider over OpenAI's Responses API. It keeps no state on
// the server (store=false): reasoning travels back as encrypted content. The
// API has no stop sequences, so Request.StopSequences is ignored. It
// implements [llm.Provider] and [llm.AuthValidator].
type Responses struct {
	c   *client
	svc responses.ResponseService
}

// NewResponses returns a Responses API provider.
func NewResponses(cfg Config) *Responses {
	c := newClient(cfg)
	return &Responses{c: c, svc: responses.NewResponseService(c.opts...)}
}

// ValidateAuth checks the credentials by listing the models (SPEC PROV-4).
func (p *Responses) ValidateAuth(ctx context.Context) error { return p.c.validateAuth(ctx) }

// Stream sends req and yields the reply as it arrives (SPEC PROV-1).
func (p *Responses) Stream(ctx context.Context, req *llm.Request) iter.Seq2[llm.Delta, error] {
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
func (p *Responses) params(req *llm.Request) responses.ResponseNewParams {
	out := responses.ResponseNewParams{
		Model:   shared.ResponsesModel(req.Model),
		Store:   openai.Bool(false),
		Include: []responses.ResponseIncludable{responses.ResponseIncludableReasoningEncryptedContent},
	}
	if req.System != "" {
		out.Instructions = openai.String(req.System)
	}
	var items responses.ResponseInputParam
	for _, m := range p.c.prepare(req) {
		if m.Role == llm.RoleAssistant {
			items = appendRespAssistant(items, m)
		} else {
			items = appendRespUser(items, m)
		}
	}
	out.Input = responses.ResponseNewParamsInputUnion{OfInputItemList: items}
	for _, t := range req.Tools {
		fn := param.Override[responses.FunctionToolParam](respFunction{Type: "function", Name: t.Name,
			Description: t.Description, Parameters: toolSchema(t.InputSchema)})
		out.Tools = append(out.Tools, responses.ToolUnionParam{OfFunction: &fn})
	}
	if req.MaxTokens > 0 {
		out.MaxOutputTokens = openai.Int(int64(req.MaxTokens))
	}
	if req.Temperature != nil {
		out.Temperature = openai.Float(*req.Temperature)
	}
	if req.Thinking != nil {
		out.Reasoning = shared.ReasoningParam{Effort: shared.ReasoningEffort(effort(req.Thinking)),
			Summary: shared.ReasoningSummaryAuto}
	}
	if req.CacheKey != "" && p.c.openAI {
		out.PromptCacheKey = openai.String(hashCacheKey(req.CacheKey))
	}
	return out
}

// respFunction is a function tool whose parameters are the tool's schema as
// given, key order kept. Strict is sent false: the Responses API defaults it
// to true, which most tool schemas do not satisfy.
type respFunction struct {
	Type        string          `json:"type"`
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters"`
	Strict      bool            `json:"strict"`
}

// appendRespUser appends a user message: each tool result becomes a
// function_call_output item, the rest one user message after them.
func appendRespUser(items responses.ResponseInputParam, m llm.Message) responses.ResponseInputParam {
	var parts responses.ResponseInputMessageContentListParam
	for _, b := range m.Content {
		switch b := b.(type) {
		case *llm.ToolResult:
			items = append(items, responses.ResponseInputItemUnionParam{
				OfFunctionCallOutput: &responses.ResponseInputItemFunctionCallOutputParam{
					CallID: openai.String(b.ToolUseID),
					Output: responses.ResponseInputItemFunctionCallOutputOutputUnionParam{
						OfString: openai.String(toolResultText(b))},
				}})
		case *llm.Text:
			parts = append(parts, responses.ResponseInputContentUnionParam{
				OfInputText: &responses.ResponseInputTextParam{Text: b.Text}})
		case *llm.Image:
			parts = append(parts, responses.ResponseInputContentUnionParam{
				OfInputImage: &responses.ResponseInputImageParam{ImageURL: openai.String(imageURL(b)),
					Detail: responses.ResponseInputImageDetailAuto}})
		}
	}
	if len(parts) > 0 {
		items = append(items, responses.ResponseInputItemUnionParam{OfMessage: &responses.EasyInputMessageParam{
			Role: responses.EasyInputMessageRoleUser, Type: responses.EasyInputMessageTypeMessage,
			Content: responses.EasyInputMessageContentUnionParam{OfInputItemContentList: parts}}})
	}
	return items
}

// appendRespAssistant appends an assistant message's items in order: a
// reasoning item per thinking block that can be replayed (it needs its id and
// encrypted content, as nothing is stored), an output message per text, a
// function_call per tool use.
func appendRespAssistant(items responses.ResponseInputParam, m llm.Message) responses.ResponseInputParam {
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
					Text: b.Text, Annotations: []responses.ResponseOutputTextAnnotationUnionParam{}}}},
			}})
		case *llm.ToolUse:
			args := string(b.Input)
			if len(args) == 0 {
				args = "{}"
			}
			items = append(items, responses.ResponseInputItemUnionParam{OfFunctionCall: &responses.ResponseFunctionToolCallParam{
				CallID: b.ID, Name: b.Name, Arguments: args}})
		}
	}
	return items
}
