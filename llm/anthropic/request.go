package anthropic

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/reinhq/rein/llm"
)

// DefaultMaxTokens is the max_tokens sent when Request.MaxTokens is 0.
const DefaultMaxTokens = 8192

// MinThinkingBudget is the smallest thinking budget the API accepts.
const MinThinkingBudget = 1024

// cacheTail is how many of the newest messages get a cache breakpoint.
const cacheTail = 2

// effortBudget is the thinking budget for an Effort given without BudgetTokens.
var effortBudget = map[string]int{"low": MinThinkingBudget, "medium": 4096, "high": 16384}

// defaultThinkingBudget is the budget when neither BudgetTokens nor Effort is set.
const defaultThinkingBudget = 4096

// The body of POST /v1/messages, as far as rein fills it. The fields are
// declared in the order the official SDK wrote them, which is not
// alphabetical (a tool_use block is id, input, name, cache_control, type),
// and "omitzero" is used where the SDK used it, so an empty list that is not
// nil still goes out as []: the bytes are those the SDK sent, which
// golden_body_test.go pins (SPEC PROV-6). encoding/json escapes <, > and &
// and compacts raw JSON, as the SDK's encoder did.

// messagesRequest is the request body, without "stream":true, which
// encodeBody appends last.
type messagesRequest struct {
	MaxTokens     int64           `json:"max_tokens"`
	Messages      []messageParam  `json:"messages,omitzero"`
	Model         string          `json:"model,omitzero"`
	StopSequences []string        `json:"stop_sequences,omitzero"`
	System        []*textBlock    `json:"system,omitzero"`
	Thinking      *thinkingConfig `json:"thinking,omitzero"`

	// tools are encoded by encodeBody, after the fields above, as a
	// "tools" list of toolParam objects (tools.go).
	tools []llm.ToolSpec
}

// messageParam is one message of the conversation.
type messageParam struct {
	Content []contentBlock `json:"content,omitzero"`
	Role    string         `json:"role"`
}

// contentBlock is one block of a message's content or of a tool result's:
// a *textBlock, *imageBlock, *thinkingBlock, *redactedThinkingBlock,
// *toolUseBlock, *toolResultBlock or opaqueBlock.
type contentBlock interface {
	// markCache puts a cache breakpoint on the block and reports whether
	// the block can carry one.
	markCache() bool
}

// cacheControl is a prompt-cache breakpoint.
type cacheControl struct {
	Type string `json:"type"`
}

// ephemeral returns the only breakpoint rein sets.
func ephemeral() *cacheControl { return &cacheControl{Type: "ephemeral"} }

// textBlock is a text block; the system prompt is a list of them.
type textBlock struct {
	Text         string        `json:"text"`
	CacheControl *cacheControl `json:"cache_control,omitzero"`
	Type         string        `json:"type"` // "text"
}

// imageBlock is an image, inline or by URL.
type imageBlock struct {
	Source       imageSource   `json:"source"`
	CacheControl *cacheControl `json:"cache_control,omitzero"`
	Type         string        `json:"type"` // "image"
}

// imageSource is where an image's bytes are: Data and MediaType with type
// "base64", or URL with type "url".
type imageSource struct {
	Data      string `json:"data,omitempty"`
	MediaType string `json:"media_type,omitempty"`
	URL       string `json:"url,omitempty"`
	Type      string `json:"type"`
}

// thinkingBlock is signed thinking replayed to the model that wrote it.
type thinkingBlock struct {
	Signature string `json:"signature"`
	Thinking  string `json:"thinking"`
	Type      string `json:"type"` // "thinking"
}

// redactedThinkingBlock is redacted thinking, its opaque data replayed as it
// came.
type redactedThinkingBlock struct {
	Data string `json:"data"`
	Type string `json:"type"` // "redacted_thinking"
}

// toolUseBlock is a tool call the model made.
type toolUseBlock struct {
	ID           string          `json:"id"`
	Input        json.RawMessage `json:"input"`
	Name         string          `json:"name"`
	CacheControl *cacheControl   `json:"cache_control,omitzero"`
	Type         string          `json:"type"` // "tool_use"
}

// toolResultBlock answers a tool call; its content holds text and image
// blocks.
type toolResultBlock struct {
	ToolUseID    string         `json:"tool_use_id"`
	IsError      bool           `json:"is_error,omitzero"`
	CacheControl *cacheControl  `json:"cache_control,omitzero"`
	Content      []contentBlock `json:"content,omitzero"`
	Type         string         `json:"type"` // "tool_result"
}

// toolParam declares a client tool.
type toolParam struct {
	InputSchema  json.RawMessage `json:"input_schema"`
	Name         string          `json:"name"`
	Description  string          `json:"description,omitzero"`
	CacheControl *cacheControl   `json:"cache_control,omitzero"`
}

// thinkingConfig turns on extended thinking.
type thinkingConfig struct {
	BudgetTokens int64  `json:"budget_tokens"`
	Type         string `json:"type"` // "enabled"
}

// opaqueBlock is a block the API sent that rein does not model (a server
// tool's call or result), replayed as the bytes it was stored as: they are
// in normal form (llm.NormalizeOpaque), which encoding/json leaves as it is.
type opaqueBlock struct {
	raw json.RawMessage
}

// MarshalJSON returns the stored bytes.
func (b opaqueBlock) MarshalJSON() ([]byte, error) { return b.raw, nil }

// markCache reports false: a breakpoint would change the stored bytes.
func (opaqueBlock) markCache() bool { return false }

// markCache puts a breakpoint on the text.
func (b *textBlock) markCache() bool { b.CacheControl = ephemeral(); return true }

// markCache puts a breakpoint on the image.
func (b *imageBlock) markCache() bool { b.CacheControl = ephemeral(); return true }

// markCache puts a breakpoint on the tool call.
func (b *toolUseBlock) markCache() bool { b.CacheControl = ephemeral(); return true }

// markCache puts a breakpoint on the tool result.
func (b *toolResultBlock) markCache() bool { b.CacheControl = ephemeral(); return true }

// markCache reports false: thinking cannot carry a breakpoint.
func (*thinkingBlock) markCache() bool { return false }

// markCache reports false: redacted thinking cannot carry a breakpoint.
func (*redactedThinkingBlock) markCache() bool { return false }

// encodeBody serialises r as the body of a streamed request: "stream":true
// goes last, where the SDK put it.
func encodeBody(r *messagesRequest) ([]byte, error) {
	b, err := json.Marshal(r)
	if err != nil {
		return nil, err
	}
	// b is an object that is never empty: max_tokens is always there. The
	// tools, its last field, come from toolJSON (tools.go), then stream.
	return appendTools(b[:len(b)-1], r.tools, `,"stream":true}`)
}

// buildRequest turns req into the request body. msgs is req.Messages after
// llm.PrepareHistory. Nothing in it depends on map order or the clock: the
// same request always serialises to the same bytes.
func buildRequest(req *llm.Request, msgs []llm.Message) (*messagesRequest, error) {
	p := &messagesRequest{
		Model:         req.Model,
		MaxTokens:     int64(req.MaxTokens),
		StopSequences: req.StopSequences,
	}
	if p.MaxTokens <= 0 {
		p.MaxTokens = DefaultMaxTokens
	}
	if t := req.Thinking; t != nil {
		budget := thinkingBudget(t)
		if p.MaxTokens <= int64(budget) {
			p.MaxTokens += int64(budget)
		}
		p.Thinking = &thinkingConfig{BudgetTokens: int64(budget), Type: "enabled"}
	}
	if req.System != "" {
		p.System = []*textBlock{{Text: req.System, CacheControl: ephemeral(), Type: "text"}}
	}
	p.tools = req.Tools
	p.Messages = make([]messageParam, 0, len(msgs))
	for i, m := range msgs {
		blocks, err := toContent(m)
		if err != nil {
			return nil, fmt.Errorf("message %d: %w", i, err)
		}
		if i >= len(msgs)-cacheTail {
			markLastCacheable(blocks)
		}
		switch m.Role {
		case llm.RoleUser, llm.RoleAssistant:
			p.Messages = append(p.Messages, messageParam{Content: blocks, Role: string(m.Role)})
		default:
			return nil, fmt.Errorf("message %d: unknown role %q", i, m.Role)
		}
	}
	return p, nil
}

// thinkingBudget is the budget_tokens for t: BudgetTokens, else the
// Effort's budget, at least MinThinkingBudget.
func thinkingBudget(t *llm.ThinkingConfig) int {
	budget := t.BudgetTokens
	if budget == 0 {
		budget = defaultThinkingBudget
		if b, ok := effortBudget[t.Effort]; ok {
			budget = b
		}
	}
	return max(budget, MinThinkingBudget)
}

// toTool converts a tool declaration. The schema goes out as the caller
// wrote it, compacted; an empty one is {"type":"object"}.
func toTool(t llm.ToolSpec) (*toolParam, error) {
	schema := t.InputSchema
	if len(schema) == 0 {
		schema = json.RawMessage(`{"type":"object"}`)
	}
	if !json.Valid(schema) {
		return nil, fmt.Errorf("tool %q: input schema is not valid JSON", t.Name)
	}
	return &toolParam{InputSchema: schema, Name: t.Name, Description: t.Description}, nil
}

// toContent converts a message's blocks. Empty text blocks, which the API
// rejects, are left out, and so are thinking blocks without a signature,
// which it cannot verify. The list is never nil: a message left without
// blocks goes out with "content":[].
func toContent(m llm.Message) ([]contentBlock, error) {
	out := make([]contentBlock, 0, len(m.Content))
	for _, b := range m.Content {
		switch b := b.(type) {
		case *llm.Text:
			if b.Text != "" {
				out = append(out, &textBlock{Text: b.Text, Type: "text"})
			}
		case *llm.Image:
			img, err := toImage(b)
			if err != nil {
				return nil, err
			}
			out = append(out, img)
		case *llm.Thinking:
			switch {
			case m.Role != llm.RoleAssistant || b.Signature == "":
			case b.Redacted:
				out = append(out, &redactedThinkingBlock{Data: b.Signature, Type: "redacted_thinking"})
			default:
				out = append(out, &thinkingBlock{Signature: b.Signature, Thinking: b.Text, Type: "thinking"})
			}
		case *llm.ToolUse:
			input := b.Input
			if len(input) == 0 {
				input = json.RawMessage("{}")
			}
			if !json.Valid(input) {
				return nil, fmt.Errorf("tool_use %s: input is not valid JSON", b.ID)
			}
			out = append(out, &toolUseBlock{ID: b.ID, Input: input, Name: b.Name, Type: "tool_use"})
		case *llm.ToolResult:
			r, err := toResult(b)
			if err != nil {
				return nil, err
			}
			out = append(out, r)
		case *llm.Opaque:
			// Only assistant content is the model's to get back; history
			// was prepared, so the block is this provider's (PROV-5).
			// One that fails its check (made in memory: a stored one was
			// checked when read) is left out and counted, like the
			// Responses adapter does, rather than failing every request of
			// the session.
			if m.Role != llm.RoleAssistant || b.Check() != nil {
				llm.RecordDrop(m.Provider, llm.DropReplay, b.Type)
				continue
			}
			out = append(out, opaqueBlock{raw: b.Raw})
		default:
			return nil, fmt.Errorf("unsupported block %T", b)
		}
	}
	return out, nil
}

// toImage converts an image: its bytes in base64, with the media type they
// show when none is given, else its URL.
func toImage(img *llm.Image) (*imageBlock, error) {
	if len(img.Data) > 0 {
		mediaType := img.MediaType
		if mediaType == "" {
			mediaType = http.DetectContentType(img.Data)
		}
		return &imageBlock{Type: "image", Source: imageSource{
			Data:      base64.StdEncoding.EncodeToString(img.Data),
			MediaType: mediaType,
			Type:      "base64",
		}}, nil
	}
	if img.URL != "" {
		return &imageBlock{Type: "image", Source: imageSource{URL: img.URL, Type: "url"}}, nil
	}
	return nil, fmt.Errorf("image has neither data nor URL")
}

// toResult converts a tool result; empty text blocks are left out, and the
// content with them when nothing is left.
func toResult(r *llm.ToolResult) (*toolResultBlock, error) {
	out := &toolResultBlock{ToolUseID: r.ToolUseID, IsError: r.IsError, Type: "tool_result"}
	for _, b := range r.Content {
		switch b := b.(type) {
		case *llm.Text:
			if b.Text != "" {
				out.Content = append(out.Content, &textBlock{Text: b.Text, Type: "text"})
			}
		case *llm.Image:
			img, err := toImage(b)
			if err != nil {
				return nil, fmt.Errorf("tool_result %s: %w", r.ToolUseID, err)
			}
			out.Content = append(out.Content, img)
		default:
			return nil, fmt.Errorf("tool_result %s: unsupported block %T", r.ToolUseID, b)
		}
	}
	return out, nil
}

// markLastCacheable puts a cache breakpoint on the last block that can carry
// one (thinking blocks cannot).
func markLastCacheable(blocks []contentBlock) {
	for i := len(blocks) - 1; i >= 0; i-- {
		if blocks[i].markCache() {
			return
		}
	}
}
