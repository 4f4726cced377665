package compact

import (
	"fmt"

	"github.com/reinhq/rein/llm"
)

// logRewrite writes the one debug line of a compaction that rewrote the
// history (SPEC CTX-5): where the cached prefix breaks — the first message
// and block of the history as sent before that differ now, and what that
// block was — why the pass ran, what it did, and the tokens before and
// after. A prompt cache serves the request up to that block and no further;
// "tokens_resent" is the estimate of what follows it in the new history.
func (p *pass) logRewrite(before int) {
	msg, blk := firstRewrite(p.req.Messages, p.msgs)
	if msg < 0 {
		return
	}
	why := p.why
	switch p.mode {
	case modeManual:
		why = "manual compaction (/compact)"
	case modeOverflow:
		why = "the provider rejected the prompt as too long; " + why
	}
	p.cfg.Logger.Debug("compact: prefix rewrite",
		"trigger", triggers[p.mode], "layers", p.layers, "why", why, "cause", p.cause,
		"first_message", msg, "first_block", blk, "block", describeBlock(p.req.Messages, msg, blk),
		"tokens_before", before, "tokens_after", p.prompt(), "tokens_resent", p.size(p.msgs[min(msg, len(p.msgs)):]),
		"messages_before", len(p.req.Messages), "messages_after", len(p.msgs))
}

// firstRewrite returns the first message and block of old that next no
// longer holds at the same place, or -1, -1 when next only appends to old.
// Blocks compare as a prompt cache compares them: compaction shares every
// block it keeps, and a new block with the same bytes (a summary written
// again word for word) is no break either.
func firstRewrite(old, next []llm.Message) (int, int) {
	for i := range old {
		if i >= len(next) {
			return i, 0
		}
		a, b := old[i].Content, next[i].Content
		if old[i].Role != next[i].Role {
			return i, 0
		}
		for j := range a {
			if j >= len(b) || a[j] != b[j] && segment(a[j]) != segment(b[j]) {
				return i, j
			}
		}
		if len(b) != len(a) {
			return i, len(a)
		}
	}
	return -1, -1
}

// describeBlock names block blk of message msg for the log: its kind and,
// for tool blocks, the call's id and tool.
func describeBlock(msgs []llm.Message, msg, blk int) string {
	if msg >= len(msgs) || blk >= len(msgs[msg].Content) {
		return "end of history"
	}
	switch b := msgs[msg].Content[blk].(type) {
	case *llm.ToolResult:
		return fmt.Sprintf("tool_result %s (%s)", b.ToolUseID, toolName(msgs[:msg], b.ToolUseID))
	case *llm.ToolUse:
		return fmt.Sprintf("tool_use %s (%s)", b.ID, b.Name)
	case *llm.Thinking:
		return "thinking"
	case *llm.Image:
		return "image"
	case *llm.Text:
		if IsSummary(msgs[msg]) {
			return "summary"
		}
		return string(msgs[msg].Role) + " text"
	}
	return fmt.Sprintf("%T", msgs[msg].Content[blk])
}

// toolName finds the tool of call id among the assistant messages of msgs,
// newest first.
func toolName(msgs []llm.Message, id string) string {
	for i := len(msgs) - 1; i >= 0; i-- {
		for _, b := range msgs[i].Content {
			if u, ok := b.(*llm.ToolUse); ok && u.ID == id {
				return u.Name
			}
		}
	}
	return "unknown tool"
}
