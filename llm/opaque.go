package llm

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// MaxOpaqueBytes bounds the raw JSON of one [Opaque] block, 1 MiB. An adapter
// that reads a bigger one keeps no opaque block of that reply (a server tool's
// call and its result must travel together) and counts the drop
// ([RecordDrop], kind [DropOversize]); a session entry holding one is refused.
// Web search and code execution results are some kilobytes to some hundred.
const MaxOpaqueBytes = 1 << 20

// Opaque is content a vendor produced that rein has no block for: a server-side
// tool's call and result (Anthropic server_tool_use, web_search_tool_result,
// code_execution_tool_result; OpenAI Responses web_search_call,
// code_interpreter_call), or a block or output item the vendor added after the
// adapter was written. It is kept so nothing the model produced is lost: it is
// stored with the message like any block and replayed byte for byte to the
// provider that produced it, in the same place of the assistant message; for
// any other provider [PrepareHistory] leaves it out (SPEC PROV-5, like
// thinking), and [OpaqueLeftOut] says what a request to that provider lacks.
type Opaque struct {
	// Provider names the adapter that produced the block (the stamp of its
	// message, e.g. "anthropic").
	Provider string
	// Type is the vendor's type of the block or item ("server_tool_use",
	// "web_search_call"), the "type" field of Raw.
	Type string
	// Raw is the vendor's JSON object for the block, compact and with <, > and
	// & escaped as encoding/json writes them, so that it encodes to the same
	// bytes wherever it is embedded; see [NormalizeOpaque].
	Raw json.RawMessage
}

func (*Opaque) blockType() string { return "opaque" }

// NormalizeOpaque returns raw as an [Opaque] block holds it: compact, with <,
// > and & escaped — the form encoding/json gives any raw JSON it embeds, so
// the block's bytes are the same in the session and in every request body. It
// fails unless raw is a JSON object no bigger than [MaxOpaqueBytes] whose
// "type" is a string and not a kind rein models itself (a vendor's "text",
// "tool_use", "function_call" …): such a block would smuggle a tool call past
// the pairing of calls and results (SPEC LOOP-5).
func NormalizeOpaque(raw []byte) (json.RawMessage, string, error) {
	if len(raw) > MaxOpaqueBytes {
		return nil, "", fmt.Errorf("opaque block of %d bytes is over the limit of %d", len(raw), MaxOpaqueBytes)
	}
	var buf bytes.Buffer
	buf.Grow(len(raw))
	if err := json.Compact(&buf, raw); err != nil {
		return nil, "", fmt.Errorf("opaque block is not valid JSON: %w", err)
	}
	out := buf.Bytes()
	if len(out) == 0 || out[0] != '{' {
		return nil, "", fmt.Errorf("opaque block is not a JSON object")
	}
	var head struct {
		Type *string `json:"type"`
	}
	if err := json.Unmarshal(out, &head); err != nil || head.Type == nil || *head.Type == "" {
		return nil, "", fmt.Errorf(`opaque block has no "type" string`)
	}
	if modelled(*head.Type) {
		return nil, "", fmt.Errorf("opaque block of type %q: that kind is modelled by rein and cannot be opaque", *head.Type)
	}
	if bytes.ContainsAny(out, "<>&\u2028\u2029") {
		var esc bytes.Buffer
		json.HTMLEscape(&esc, out) // also U+2028 and U+2029, as encoding/json does
		out = esc.Bytes()
	}
	if len(out) > MaxOpaqueBytes {
		return nil, "", fmt.Errorf("opaque block of %d bytes is over the limit of %d", len(out), MaxOpaqueBytes)
	}
	return out, *head.Type, nil
}

// Check reports what makes o unfit to store or replay: no provider, a Raw
// that [NormalizeOpaque] refuses or would change, or whose "type" is not
// Type.
func (o *Opaque) Check() error {
	if o.Provider == "" {
		return fmt.Errorf("opaque block %q names no provider", o.Type)
	}
	raw, typ, err := NormalizeOpaque(o.Raw)
	switch {
	case err != nil:
		return fmt.Errorf("opaque block %q: %w", o.Type, err)
	case typ != o.Type:
		return fmt.Errorf("opaque block %q holds a %q", o.Type, typ)
	case !bytes.Equal(raw, o.Raw):
		return fmt.Errorf("opaque block %q is not in normal form (compact JSON, <>& escaped)", o.Type)
	}
	return nil
}

// modelled reports the vendor types rein has blocks of its own for.
func modelled(typ string) bool {
	switch typ {
	case "text", "image", "thinking", "redacted_thinking", "tool_use", "tool_result",
		"message", "reasoning", "function_call", "function_call_output":
		return true
	}
	return false
}

// OpaqueLeftOut reports the opaque blocks of msgs that a request to provider
// leaves out because another provider produced them (see [PrepareHistory]):
// how many, and their types in first-seen order. The agent turns it into a
// run warning.
func OpaqueLeftOut(msgs []Message, provider string) (n int, types []string) {
	seen := map[string]bool{}
	for _, m := range msgs {
		if m.Role != RoleAssistant {
			continue
		}
		for _, b := range m.Content {
			o, ok := b.(*Opaque)
			if !ok || replayable(m, o, provider) {
				continue
			}
			n++
			key := o.Provider + " " + o.Type
			if !seen[key] {
				seen[key] = true
				types = append(types, o.Type+" (from "+o.Provider+")")
			}
		}
	}
	return n, types
}

// replayable reports whether an opaque block of m goes to provider: only the
// provider that produced it can read it, and the message and the block must
// agree on who that was.
func replayable(m Message, o *Opaque, provider string) bool {
	return o.Provider == provider && m.Provider == provider
}
