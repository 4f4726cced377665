package compact

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/reinhq/rein/llm"
)

// snipMarker ends the note a snipped output carries; an output holding it is
// never snipped again.
const snipMarker = "cut by compaction …]"

// imageNote replaces an image of a snipped tool result.
const imageNote = "[image cut by compaction …]"

// snipOutputs returns msgs with the tool outputs of msgs[from:to] snipped,
// and how many blocks changed. Only tool results in user messages change;
// every other message, and every block that does not change, is shared with
// msgs, which is never modified. With nothing to snip it returns msgs.
func snipOutputs(msgs []llm.Message, from, to int, cfg *Config) ([]llm.Message, int) {
	var out []llm.Message
	changed := 0
	for i := from; i < to; i++ {
		m := &msgs[i]
		if m.Role != llm.RoleUser || !hasResults(m) {
			continue
		}
		content, n := snipBlocks(m.Content, cfg)
		if n == 0 {
			continue
		}
		if out == nil {
			out = append([]llm.Message(nil), msgs...)
		}
		out[i].Content = content
		changed += n
	}
	if out == nil {
		return msgs, 0
	}
	return out, changed
}

// snipBlocks returns blocks with their tool results snipped, as a new slice
// when anything changed.
func snipBlocks(blocks []llm.Block, cfg *Config) ([]llm.Block, int) {
	var out []llm.Block
	changed := 0
	for j, b := range blocks {
		r, ok := b.(*llm.ToolResult)
		if !ok {
			continue
		}
		nr, n := snipResult(r, cfg)
		if n == 0 {
			continue
		}
		if out == nil {
			out = append([]llm.Block(nil), blocks...)
		}
		out[j] = nr
		changed += n
	}
	if out == nil {
		return blocks, 0
	}
	return out, changed
}

// snipResult returns a copy of r with long texts snipped and images replaced
// by a note, or r itself when nothing changed.
func snipResult(r *llm.ToolResult, cfg *Config) (*llm.ToolResult, int) {
	var content []llm.Block
	changed := 0
	for k, b := range r.Content {
		var nb llm.Block
		switch b := b.(type) {
		case *llm.Text:
			if s, ok := snipText(b.Text, cfg); ok {
				nb = &llm.Text{Text: s}
			}
		case *llm.Image:
			nb = &llm.Text{Text: imageNote}
		}
		if nb == nil {
			continue
		}
		if content == nil {
			content = append([]llm.Block(nil), r.Content...)
		}
		content[k] = nb
		changed++
	}
	if content == nil {
		return r, 0
	}
	c := *r
	c.Content = content
	return &c, changed
}

// snipText keeps the first SnipHeadLines and last SnipTailLines lines of s,
// each part capped at 2×SnipMinChars characters (for outputs of a few very
// long lines), with a note of what was cut between them. It reports false
// when s is short, already snipped, or would not get shorter.
func snipText(s string, cfg *Config) (string, bool) {
	if len(s) <= cfg.SnipMinChars || strings.Contains(s, snipMarker) {
		return "", false
	}
	limit := 2 * cfg.SnipMinChars
	head := capHead(firstLines(s, cfg.SnipHeadLines), limit)
	tail := capTail(lastLines(s[len(head):], cfg.SnipTailLines), limit)
	cut := s[len(head) : len(s)-len(tail)]
	if cut == "" {
		return "", false
	}
	note := fmt.Sprintf("[… %d lines (%d chars) cut by compaction …]", lineCount(cut), utf8.RuneCountInString(cut))
	var b strings.Builder
	b.Grow(len(head) + len(note) + len(tail) + 2)
	b.WriteString(head)
	if head != "" && !strings.HasSuffix(head, "\n") {
		b.WriteByte('\n')
	}
	b.WriteString(note)
	if tail != "" {
		b.WriteByte('\n')
		b.WriteString(tail)
	}
	if b.Len() >= len(s) {
		return "", false
	}
	return b.String(), true
}

// firstLines returns the first n lines of s, each with its newline.
func firstLines(s string, n int) string {
	end := 0
	for range n {
		i := strings.IndexByte(s[end:], '\n')
		if i < 0 {
			return s
		}
		end += i + 1
	}
	return s[:end]
}

// lastLines returns the last n lines of s; a trailing newline ends the last
// line rather than starting an empty one.
func lastLines(s string, n int) string {
	start := len(strings.TrimSuffix(s, "\n"))
	for range n {
		i := strings.LastIndexByte(s[:start], '\n')
		if i < 0 {
			return s
		}
		start = i
	}
	return s[start+1:]
}

// capHead returns at most limit bytes from the start of s, cut at a rune
// boundary.
func capHead(s string, limit int) string {
	if len(s) <= limit {
		return s
	}
	i := limit
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i]
}

// capTail returns at most limit bytes from the end of s, cut at a rune
// boundary.
func capTail(s string, limit int) string {
	if len(s) <= limit {
		return s
	}
	i := len(s) - limit
	for i < len(s) && !utf8.RuneStart(s[i]) {
		i++
	}
	return s[i:]
}

// lineCount counts the lines of s, a last line without newline included.
func lineCount(s string) int {
	n := strings.Count(s, "\n")
	if s != "" && !strings.HasSuffix(s, "\n") {
		n++
	}
	return n
}

// inputMarker ends the note a shrunk tool input carries in place of the text
// it cut.
const inputMarker = "cut by compaction; the tool already ran …]"

// shrinkInputs returns msgs with the oversized tool inputs of the assistant
// messages in msgs[from:to] shrunk, and how many inputs changed: every JSON
// string longer than SnipMinChars keeps its head and tail lines and says what
// was cut, so the input stays a valid JSON object of the same shape. A 10 MB
// write_file content then no longer keeps a session over the window for good
// (SPEC PROV-7). Like snipOutputs it never modifies msgs, shares what does
// not change, and returns msgs itself when nothing does.
func shrinkInputs(msgs []llm.Message, from, to int, cfg *Config) ([]llm.Message, int) {
	var out []llm.Message
	changed := 0
	for i := from; i < to; i++ {
		m := &msgs[i]
		if m.Role != llm.RoleAssistant {
			continue
		}
		var content []llm.Block
		for j, b := range m.Content {
			u, ok := b.(*llm.ToolUse)
			if !ok || len(u.Input) <= 2*cfg.SnipMinChars {
				continue
			}
			in, ok := shrinkInput(u.Input, cfg)
			if !ok {
				continue
			}
			if content == nil {
				content = append([]llm.Block(nil), m.Content...)
			}
			nu := *u
			nu.Input = in
			content[j] = &nu
			changed++
		}
		if content == nil {
			continue
		}
		if out == nil {
			out = append([]llm.Message(nil), msgs...)
		}
		out[i].Content = content
	}
	if out == nil {
		return msgs, 0
	}
	return out, changed
}

// shrinkInput returns raw with its long strings snipped; false when raw does
// not parse or would not get shorter.
func shrinkInput(raw json.RawMessage, cfg *Config) (json.RawMessage, bool) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return nil, false
	}
	v = shrinkValue(v, cfg)
	out, err := json.Marshal(v)
	if err != nil || len(out) >= len(raw) {
		return nil, false
	}
	return out, true
}

// shrinkValue snips the long strings of a decoded JSON value.
func shrinkValue(v any, cfg *Config) any {
	switch v := v.(type) {
	case string:
		if len(v) <= cfg.SnipMinChars || strings.Contains(v, inputMarker) {
			return v
		}
		limit := cfg.SnipMinChars / 2
		head := capHead(firstLines(v, cfg.SnipHeadLines/2), limit)
		tail := capTail(lastLines(v[len(head):], cfg.SnipTailLines/2), limit)
		cut := v[len(head) : len(v)-len(tail)]
		return fmt.Sprintf("%s\n[… %d lines (%d chars) %s\n%s", head, lineCount(cut), utf8.RuneCountInString(cut), inputMarker, tail)
	case map[string]any:
		for k, e := range v {
			v[k] = shrinkValue(e, cfg)
		}
	case []any:
		for i, e := range v {
			v[i] = shrinkValue(e, cfg)
		}
	}
	return v
}

// shrink snips the tool outputs and shrinks the tool inputs of msgs[from:to]
// and returns the result with the counts of each.
func shrink(msgs []llm.Message, from, to int, cfg *Config) (out []llm.Message, outputs, inputs int) {
	out, outputs = snipOutputs(msgs, from, to, cfg)
	out, inputs = shrinkInputs(out, from, to, cfg)
	return out, outputs, inputs
}
