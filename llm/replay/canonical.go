package replay

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/reinhq/rein/llm"
)

// canonRequest is the canonical form of an [llm.Request]. Its field order is
// the order of the cassette's JSON.
type canonRequest struct {
	Model         string         `json:"model"`
	System        string         `json:"system,omitempty"`
	Messages      []canonMessage `json:"messages"`
	Tools         []canonTool    `json:"tools,omitempty"`
	MaxTokens     int            `json:"max_tokens,omitempty"`
	Temperature   *float64       `json:"temperature,omitempty"`
	Thinking      *canonThinking `json:"thinking,omitempty"`
	StopSequences []string       `json:"stop_sequences,omitempty"`
}

// canonMessage mirrors the JSON of [llm.Message], with canonical blocks.
type canonMessage struct {
	Role     llm.Role     `json:"role"`
	Content  []canonBlock `json:"content"`
	Provider string       `json:"provider,omitempty"`
	Model    string       `json:"model,omitempty"`
}

// canonBlock mirrors the JSON of an [llm.Block], except that an image's bytes
// are replaced by their SHA-256 and size and a tool input is canonical JSON.
type canonBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text,omitempty"`
	MediaType string          `json:"media_type,omitempty"`
	SHA256    string          `json:"sha256,omitempty"`
	Size      int             `json:"size,omitempty"`
	URL       string          `json:"url,omitempty"`
	Signature string          `json:"signature,omitempty"`
	Redacted  bool            `json:"redacted,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Input     json.RawMessage `json:"input,omitempty"`
	ToolUseID string          `json:"tool_use_id,omitempty"`
	Content   []canonBlock    `json:"content,omitempty"`
	IsError   bool            `json:"is_error,omitempty"`
	// Provider and Raw are an opaque block's, as llm's JSON has them;
	// absent from every other block, so hashes of requests without one are
	// unchanged.
	Provider string          `json:"provider,omitempty"`
	Raw      json.RawMessage `json:"raw,omitempty"`
}

type canonTool struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	InputSchema json.RawMessage `json:"input_schema,omitempty"`
}

type canonThinking struct {
	BudgetTokens int    `json:"budget_tokens,omitempty"`
	Effort       string `json:"effort,omitempty"`
}

// Canonical returns the canonical JSON of req: the form a cassette stores and
// replay compares. It holds Model, System, Messages, Tools, MaxTokens,
// Temperature, Thinking and StopSequences — not CacheKey, which is a session id
// and changes between runs. Tool schemas and tool inputs are re-encoded with
// sorted object keys and no insignificant space; an image is replaced by its
// media type, SHA-256 and size (or its URL); thinking signatures are kept.
// The encoding is deterministic: equal requests give equal bytes.
//
// It fails only on a message holding a nil or unknown block.
func Canonical(req *llm.Request) ([]byte, error) {
	c := canonRequest{
		Model:         req.Model,
		System:        req.System,
		Messages:      make([]canonMessage, 0, len(req.Messages)),
		MaxTokens:     req.MaxTokens,
		Temperature:   req.Temperature,
		StopSequences: req.StopSequences,
	}
	for i, m := range req.Messages {
		blocks, err := canonBlocks(m.Content)
		if err != nil {
			return nil, fmt.Errorf("replay: messages[%d]: %w", i, err)
		}
		c.Messages = append(c.Messages, canonMessage{Role: m.Role, Content: blocks, Provider: m.Provider, Model: m.Model})
	}
	for _, t := range req.Tools {
		c.Tools = append(c.Tools, canonTool{Name: t.Name, Description: t.Description, InputSchema: t.InputSchema})
	}
	if req.Thinking != nil {
		c.Thinking = &canonThinking{BudgetTokens: req.Thinking.BudgetTokens, Effort: req.Thinking.Effort}
	}
	return encodeCanon(&c)
}

// Hash returns the request hash of a canonical request: "sha256:" and the hex
// SHA-256 of its bytes.
func Hash(canonical []byte) string {
	sum := sha256.Sum256(canonical)
	return "sha256:" + hex.EncodeToString(sum[:])
}

func canonBlocks(blocks []llm.Block) ([]canonBlock, error) {
	out := make([]canonBlock, 0, len(blocks))
	for i, b := range blocks {
		switch b := b.(type) {
		case *llm.Text:
			out = append(out, canonBlock{Type: "text", Text: b.Text})
		case *llm.Image:
			cb := canonBlock{Type: "image", MediaType: b.MediaType, URL: b.URL}
			if len(b.Data) > 0 {
				sum := sha256.Sum256(b.Data)
				cb.SHA256, cb.Size = hex.EncodeToString(sum[:]), len(b.Data)
			}
			out = append(out, cb)
		case *llm.Thinking:
			out = append(out, canonBlock{Type: "thinking", Text: b.Text, Signature: b.Signature, Redacted: b.Redacted, ID: b.ID})
		case *llm.ToolUse:
			out = append(out, canonBlock{Type: "tool_use", ID: b.ID, Name: b.Name, Input: b.Input, Signature: b.Signature})
		case *llm.ToolResult:
			content, err := canonBlocks(b.Content)
			if err != nil {
				return nil, fmt.Errorf("content[%d]: %w", i, err)
			}
			out = append(out, canonBlock{Type: "tool_result", ToolUseID: b.ToolUseID, Content: content, IsError: b.IsError})
		case *llm.Opaque:
			out = append(out, canonBlock{Type: "opaque", Provider: b.Provider, Raw: canonJSON(b.Raw)})
		case nil:
			return nil, fmt.Errorf("content[%d]: nil block", i)
		default:
			return nil, fmt.Errorf("content[%d]: unknown block %T", i, b)
		}
	}
	return out, nil
}

// encodeCanon normalises c in place — raw JSON canonicalised, nil slices made
// empty where the form always has them — and encodes it.
func encodeCanon(c *canonRequest) ([]byte, error) {
	if c.Messages == nil {
		c.Messages = []canonMessage{}
	}
	for i := range c.Messages {
		if c.Messages[i].Content == nil {
			c.Messages[i].Content = []canonBlock{}
		}
		normBlocks(c.Messages[i].Content)
	}
	for i := range c.Tools {
		if len(c.Tools[i].InputSchema) > 0 {
			c.Tools[i].InputSchema = canonJSON(c.Tools[i].InputSchema)
		}
	}
	return marshal(c)
}

func normBlocks(bs []canonBlock) {
	for i := range bs {
		b := &bs[i]
		if b.Type == "tool_use" {
			if len(b.Input) == 0 {
				b.Input = json.RawMessage("{}")
			} else {
				b.Input = canonJSON(b.Input)
			}
		} else if len(b.Input) > 0 {
			b.Input = canonJSON(b.Input)
		}
		normBlocks(b.Content)
	}
}

// parseCanon decodes a recorded request and returns it in canonical form, so
// a cassette edited by hand (spacing, key order) still matches. Fields the
// canonical form does not have are an error.
func parseCanon(raw json.RawMessage) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	var c canonRequest
	if err := dec.Decode(&c); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("data after the request object")
	}
	return encodeCanon(&c)
}

// canonJSON re-encodes raw JSON deterministically: object keys sorted, no
// insignificant space, numbers kept as written, HTML characters not escaped.
// Text that is not one JSON value is kept as a JSON string, so the form stays
// valid JSON and still differs from any other input.
func canonJSON(raw json.RawMessage) json.RawMessage {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return quoteJSON(raw)
	}
	if _, err := dec.Token(); err != io.EOF {
		return quoteJSON(raw)
	}
	out, err := marshal(v)
	if err != nil {
		return quoteJSON(raw)
	}
	return out
}

func quoteJSON(raw []byte) json.RawMessage {
	out, _ := marshal(string(raw)) // a string always encodes
	return out
}

// marshal encodes v as compact JSON without HTML escaping and without the
// encoder's trailing newline.
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// truncate shortens s for an error message.
func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…(" + strconv.Itoa(len(r)-n) + " more)"
}
