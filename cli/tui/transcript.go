package tui

import (
	"fmt"
	"strings"

	"github.com/reinhq/rein/agent"
	"github.com/reinhq/rein/llm"
)

// Transcripter is a [Backend] with a conversation to show: when the
// session starts on a resumed conversation, or /resume switches to one,
// the UI prints it into the scrollback (SPEC CLI-6, SESS-3), so the
// screen is not blank.
type Transcripter interface {
	Transcript() []llm.Message
}

// maxTranscript is how many messages of a resumed conversation are
// printed; older ones are counted.
const maxTranscript = 200

// printTranscript prints the backend's conversation, when it has one.
func (m *model) printTranscript() {
	t, ok := m.backend.(Transcripter)
	if !ok {
		return
	}
	msgs := t.Transcript()
	if len(msgs) == 0 {
		return
	}
	head := fmt.Sprintf("── the conversation so far: %d messages", len(msgs))
	if len(msgs) > maxTranscript {
		head += fmt.Sprintf(" (the %d oldest left out here; rein sessions export shows them)", len(msgs)-maxTranscript)
		msgs = msgs[len(msgs)-maxTranscript:]
	}
	m.printBlock(m.st.dim.Render(head + " ──"))
	for _, s := range m.transcript(msgs) {
		m.printBlock(s)
	}
	m.printBlock(m.st.dim.Render("── end of the earlier conversation ──"))
}

// transcript renders messages as a run shows them: the user's prompts,
// the assistant's text as markdown, each tool call with its result.
func (m *model) transcript(msgs []llm.Message) []string {
	results := map[string]*llm.ToolResult{}
	for _, msg := range msgs {
		for _, r := range msg.ToolResults() {
			results[r.ToolUseID] = r
		}
	}
	var out []string
	for _, msg := range msgs {
		switch msg.Role {
		case llm.RoleUser:
			if text := strings.TrimSpace(msg.TextOf()); text != "" {
				out = append(out, m.userEcho(text))
			}
		case llm.RoleAssistant:
			for _, b := range msg.Content {
				switch b := b.(type) {
				case *llm.Text:
					if strings.TrimSpace(b.Text) != "" {
						out = append(out, strings.TrimRight(m.md.render(b.Text, m.width, m.dark), "\n"))
					}
				case *llm.ToolUse:
					ev := &agent.ToolEvent{ID: b.ID, Name: b.Name, Input: b.Input, Outcome: "interrupted", IsError: true}
					if r := results[b.ID]; r != nil {
						ev.Output, ev.IsError, ev.Outcome = resultText(r), r.IsError, ""
					}
					out = append(out, m.toolEndView(&toolRun{summary: toolSummary(b.Name, b.Input), input: b.Input}, ev))
				}
			}
		}
	}
	return out
}

// resultText is the text of a tool result, with a note per image.
func resultText(r *llm.ToolResult) string {
	var parts []string
	for _, b := range r.Content {
		switch b := b.(type) {
		case *llm.Text:
			parts = append(parts, b.Text)
		case *llm.Image:
			parts = append(parts, "[image]")
		}
	}
	return strings.Join(parts, "\n")
}
