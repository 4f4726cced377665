package llm

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Role says who wrote a message.
type Role string

// The roles of a conversation. The system prompt is not a message: it travels in
// [Request.System].
const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
)

// Message is one turn of a conversation.
//
// Assistant messages are stamped with the provider and model that produced them
// (SPEC PROV-5), so thinking blocks and signatures are replayed only to the same
// model; see [PrepareHistory].
type Message struct {
	Role    Role
	Content []Block
	// Provider and Model name who produced an assistant message ("anthropic",
	// "claude-sonnet-4-5"). Empty on user messages.
	Provider string
	Model    string
}

// Block is one piece of a message's content: *Text, *Image, *Thinking, *ToolUse,
// *ToolResult or *Opaque. The set is closed.
type Block interface {
	blockType() string
}

// Text is plain text.
type Text struct {
	Text string
}

// Image is an image given inline (Data with MediaType) or by URL.
type Image struct {
	MediaType string // "image/png", "image/jpeg", "image/gif", "image/webp"
	Data      []byte // raw bytes, not base64; JSON encodes them as base64
	URL       string // used when Data is empty
}

// Thinking is a model's visible or hidden reasoning. Signature is the opaque
// proof a vendor requires to accept the block back (Anthropic's signature,
// OpenAI Responses' encrypted_content, Gemini's thought signature); it is
// replayed byte for byte to the model that produced it and to no other.
type Thinking struct {
	Text      string
	Signature string
	// Redacted marks a block whose reasoning the vendor hid (Anthropic
	// redacted_thinking); Signature then holds the vendor's opaque data.
	Redacted bool
	// ID is the vendor's identifier of the reasoning item, where it has one
	// (OpenAI Responses "rs_…").
	ID string
}

// ToolUse is a model's request to run a tool.
type ToolUse struct {
	ID    string
	Name  string
	Input json.RawMessage // a JSON object; "{}" when the tool takes no input
	// Signature is vendor-opaque data bound to this call (Gemini's
	// thoughtSignature on a functionCall part); replayed only to the same model.
	Signature string
}

// ToolResult answers one ToolUse. Content holds *Text and *Image blocks only.
type ToolResult struct {
	ToolUseID string
	Content   []Block
	IsError   bool
}

func (*Text) blockType() string       { return "text" }
func (*Image) blockType() string      { return "image" }
func (*Thinking) blockType() string   { return "thinking" }
func (*ToolUse) blockType() string    { return "tool_use" }
func (*ToolResult) blockType() string { return "tool_result" }

// UserText returns a user message holding one text block.
func UserText(text string) Message {
	return Message{Role: RoleUser, Content: []Block{&Text{Text: text}}}
}

// TextOf returns the concatenated text blocks of a message, ignoring every
// other kind of block.
func (m Message) TextOf() string {
	var n int
	for _, b := range m.Content {
		if t, ok := b.(*Text); ok {
			n += len(t.Text)
		}
	}
	buf := make([]byte, 0, n)
	for _, b := range m.Content {
		if t, ok := b.(*Text); ok {
			buf = append(buf, t.Text...)
		}
	}
	return string(buf)
}

// Empty reports a message with nothing a reader would see: no tool call, no
// tool result, no image, no text but white space (thinking alone is empty:
// SPEC LOOP-10 retries such a reply). Opaque vendor content is not empty: a
// reply that is only a server tool's call and result (Anthropic's pause_turn
// mid-search) must be kept and sent back, not asked for again.
func (m Message) Empty() bool {
	for _, b := range m.Content {
		switch b := b.(type) {
		case *Text:
			if strings.TrimSpace(b.Text) != "" {
				return false
			}
		case *ToolUse, *ToolResult, *Image, *Opaque:
			return false
		}
	}
	return true
}

// ToolUses returns the message's tool calls in declaration order.
func (m Message) ToolUses() []*ToolUse {
	var out []*ToolUse
	for _, b := range m.Content {
		if u, ok := b.(*ToolUse); ok {
			out = append(out, u)
		}
	}
	return out
}

// ToolResults returns the message's tool results in the order they appear.
func (m Message) ToolResults() []*ToolResult {
	var out []*ToolResult
	for _, b := range m.Content {
		if r, ok := b.(*ToolResult); ok {
			out = append(out, r)
		}
	}
	return out
}

// wireBlock is the JSON form of every block kind; Type selects the kind.
type wireBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text,omitempty"`
	MediaType string          `json:"media_type,omitempty"`
	Data      []byte          `json:"data,omitempty"`
	URL       string          `json:"url,omitempty"`
	Signature string          `json:"signature,omitempty"`
	Redacted  bool            `json:"redacted,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Input     json.RawMessage `json:"input,omitempty"`
	ToolUseID string          `json:"tool_use_id,omitempty"`
	Content   []wireBlock     `json:"content,omitempty"`
	IsError   bool            `json:"is_error,omitempty"`
	// Provider and Raw are an opaque block's.
	Provider string          `json:"provider,omitempty"`
	Raw      json.RawMessage `json:"raw,omitempty"`
}

type wireMessage struct {
	Role     Role        `json:"role"`
	Content  []wireBlock `json:"content"`
	Provider string      `json:"provider,omitempty"`
	Model    string      `json:"model,omitempty"`
}

// MarshalJSON encodes the message with a "type" field on every block.
func (m Message) MarshalJSON() ([]byte, error) {
	w := wireMessage{Role: m.Role, Provider: m.Provider, Model: m.Model}
	var err error
	if w.Content, err = toWire(m.Content); err != nil {
		return nil, err
	}
	return json.Marshal(w)
}

// UnmarshalJSON decodes what MarshalJSON wrote. An unknown block type is an
// error naming it.
func (m *Message) UnmarshalJSON(data []byte) error {
	var w wireMessage
	if err := json.Unmarshal(data, &w); err != nil {
		return err
	}
	content, err := fromWire(w.Content)
	if err != nil {
		return err
	}
	*m = Message{Role: w.Role, Content: content, Provider: w.Provider, Model: w.Model}
	return nil
}

func toWire(blocks []Block) ([]wireBlock, error) {
	out := make([]wireBlock, 0, len(blocks))
	for _, b := range blocks {
		switch b := b.(type) {
		case *Text:
			out = append(out, wireBlock{Type: "text", Text: b.Text})
		case *Image:
			out = append(out, wireBlock{Type: "image", MediaType: b.MediaType, Data: b.Data, URL: b.URL})
		case *Thinking:
			out = append(out, wireBlock{Type: "thinking", Text: b.Text, Signature: b.Signature, Redacted: b.Redacted, ID: b.ID})
		case *ToolUse:
			input := b.Input
			if len(input) == 0 {
				input = json.RawMessage("{}")
			}
			out = append(out, wireBlock{Type: "tool_use", ID: b.ID, Name: b.Name, Input: input, Signature: b.Signature})
		case *ToolResult:
			content, err := toWire(b.Content)
			if err != nil {
				return nil, err
			}
			out = append(out, wireBlock{Type: "tool_result", ToolUseID: b.ToolUseID, Content: content, IsError: b.IsError})
		case *Opaque:
			if err := b.Check(); err != nil {
				return nil, fmt.Errorf("llm: %w", err)
			}
			out = append(out, wireBlock{Type: "opaque", Provider: b.Provider, Raw: b.Raw})
		case nil:
			return nil, fmt.Errorf("llm: nil content block")
		default:
			return nil, fmt.Errorf("llm: unknown block %T", b)
		}
	}
	return out, nil
}

func fromWire(ws []wireBlock) ([]Block, error) {
	out := make([]Block, 0, len(ws))
	for _, w := range ws {
		switch w.Type {
		case "text":
			out = append(out, &Text{Text: w.Text})
		case "image":
			out = append(out, &Image{MediaType: w.MediaType, Data: w.Data, URL: w.URL})
		case "thinking":
			out = append(out, &Thinking{Text: w.Text, Signature: w.Signature, Redacted: w.Redacted, ID: w.ID})
		case "tool_use":
			out = append(out, &ToolUse{ID: w.ID, Name: w.Name, Input: w.Input, Signature: w.Signature})
		case "tool_result":
			content, err := fromWire(w.Content)
			if err != nil {
				return nil, err
			}
			out = append(out, &ToolResult{ToolUseID: w.ToolUseID, Content: content, IsError: w.IsError})
		case "opaque":
			// Normalised again: a hand-edited session may have re-indented it.
			raw, typ, err := NormalizeOpaque(w.Raw)
			if err != nil {
				return nil, fmt.Errorf("llm: %w", err)
			}
			o := &Opaque{Provider: w.Provider, Type: typ, Raw: raw}
			if err := o.Check(); err != nil {
				return nil, fmt.Errorf("llm: %w", err)
			}
			out = append(out, o)
		default:
			return nil, fmt.Errorf("llm: unknown block type %q (want text, image, thinking, tool_use, tool_result or opaque)", w.Type)
		}
	}
	return out, nil
}

// ToolInput turns a tool call's raw arguments into a valid JSON input: "{}"
// when empty, the arguments themselves when they are valid JSON, and
// otherwise {"_raw_arguments": "…"} so the message stays well-formed and the
// model can see what it sent (a call cut at max_tokens, say).
func ToolInput(raw string) json.RawMessage {
	trimmed := strings.TrimSpace(raw)
	switch {
	case trimmed == "":
		return json.RawMessage("{}")
	case json.Valid([]byte(trimmed)):
		return json.RawMessage(trimmed)
	}
	b, _ := json.Marshal(map[string]string{"_raw_arguments": raw})
	return b
}
