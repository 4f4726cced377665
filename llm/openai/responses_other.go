package openai

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/reinhq/rein/llm"
)

// The Responses stream's items and events of kinds rein does not model:
// events it knows and skips, items kept whole as llm.Opaque blocks (issue
// 23), and the rule that an output index keeps its kind once it has content.

// respRedundant are event types rein knows and skips: what they carry comes
// again whole in an output item (the ".done" and ".added" of parts, the
// progress of server-side tools) or is of no use to rein. Any other type
// not in respEvents is counted as dropped.
var respRedundant = map[string]bool{
	"response.queued": true, "response.output_text.done": true, "response.output_text.annotation.added": true,
	"response.content_part.added": true, "response.content_part.done": true, "response.refusal.done": true,
	"response.function_call_arguments.done": true, "response.reasoning_summary_part.added": true,
	"response.reasoning_summary_part.done": true, "response.reasoning_summary_text.done": true,
	"response.reasoning_text.done": true, "response.custom_tool_call_input.delta": true,
	"response.custom_tool_call_input.done": true, "response.code_interpreter_call_code.delta": true,
	"response.code_interpreter_call_code.done": true,
}

// respProgress are the prefixes of server-side tools' progress events: the
// call's item, kept opaque, holds what they announce.
var respProgress = []string{"response.web_search_call.", "response.file_search_call.", "response.code_interpreter_call.",
	"response.image_generation_call.", "response.mcp_call.", "response.mcp_call_arguments.", "response.mcp_list_tools."}

// redundant reports whether typ is an event rein knows and skips.
func redundant(typ string) bool {
	if respRedundant[typ] {
		return true
	}
	for _, p := range respProgress {
		if strings.HasPrefix(typ, p) {
			return true
		}
	}
	return false
}

// other keeps an output item of a kind rein does not model, raw, for an
// opaque block; its latest form wins (output_item.done after .added). An
// item that names no kind is counted and dropped.
func (s *respState) other(i int, kind string, raw json.RawMessage) {
	if kind == "" {
		if len(raw) > 0 && string(raw) != "null" {
			llm.RecordDrop(s.c.name, llm.DropBlock, "untyped")
		}
		return
	}
	it := s.at(i, kind)
	it.kind = kind
	if len(raw) > llm.MaxOpaqueBytes {
		it.raw, it.oversize = nil, true
		return
	}
	it.raw = append(it.raw[:0], raw...)
}

// claim makes the item at output index i one of kind: an item seen with
// another kind takes the new one while it holds nothing; once it has
// content, a change of kind is malformed data — the text streamed as one
// kind would end up as another in the final message.
func (s *respState) claim(i int, kind string) error {
	if kind == "" {
		return nil
	}
	it := s.at(i, kind)
	if it.kind == kind {
		return nil
	}
	if it.text.Len() > 0 || it.args.Len() > 0 || it.started || len(it.raw) > 0 || it.oversize {
		return s.c.malformed(jsonError("output item " + strconv.Itoa(i) + " changed from " + it.kind + " to " + kind))
	}
	it.kind = kind
	return nil
}

// opaque turns an item of a kind rein does not model into an llm.Opaque; one
// that cannot be kept has no Raw, and jsonevents.KeepOpaque drops it.
func (s *respState) opaque(it *respOut) *llm.Opaque {
	o := &llm.Opaque{Provider: s.c.name, Type: it.kind}
	if it.oversize {
		return o
	}
	raw, typ, err := llm.NormalizeOpaque(it.raw)
	if err != nil || typ != it.kind {
		return o
	}
	o.Raw = raw
	return o
}
