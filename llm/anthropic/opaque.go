package anthropic

import (
	"encoding/json"

	"github.com/reinhq/rein/llm"
)

// Content blocks of types rein does not model — server tools' calls and
// results, types added after this adapter — kept whole as llm.Opaque blocks
// (issue 23).

// known reports the content block types rein models; any other is kept as
// an llm.Opaque block.
func known(typ string) bool {
	switch typ {
	case "text", "thinking", "redacted_thinking", "tool_use":
		return true
	}
	return false
}

// rawBlocks returns the raw JSON of an event's content blocks: message_start's
// message.content when all, else content_block_start's content_block alone.
// It is called only for a block of a type rein does not model, so the second
// decoding costs nothing on the path of text and tool calls.
func (s *stream) rawBlocks(data []byte, all bool) []json.RawMessage {
	if all {
		var ev struct {
			Message struct {
				Content []json.RawMessage `json:"content"`
			} `json:"message"`
		}
		_ = json.Unmarshal(data, &ev)
		return ev.Message.Content
	}
	var ev struct {
		ContentBlock json.RawMessage `json:"content_block"`
	}
	if json.Unmarshal(data, &ev) != nil || len(ev.ContentBlock) == 0 {
		return nil
	}
	return []json.RawMessage{ev.ContentBlock}
}

// opaque turns a block of a type rein does not model into an llm.Opaque,
// its streamed input (a server tool's) put in place of the start's; one that
// cannot be kept has no Raw, and jsonevents.KeepOpaque drops it.
func (s *stream) opaque(b *block) *llm.Opaque {
	o := &llm.Opaque{Provider: s.name, Type: b.kind}
	raw := b.raw
	if b.oversize || len(raw) == 0 {
		return o
	}
	if len(b.input) > 0 {
		var fields map[string]json.RawMessage
		if json.Unmarshal(raw, &fields) != nil || !json.Valid(b.input) {
			return o
		}
		fields["input"] = b.input
		var err error
		if raw, err = json.Marshal(fields); err != nil {
			return o
		}
	}
	norm, typ, err := llm.NormalizeOpaque(raw)
	if err != nil || typ != b.kind {
		return o
	}
	o.Raw = norm
	return o
}
