package compact

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/reinhq/rein/agent"
	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/tokens"
)

// SummaryHeader opens the user message that replaces summarised messages.
const SummaryHeader = "[Earlier messages of this conversation were summarised to fit the context window. Summary:]"

// SummaryInstruction is the text of the user message appended to the
// conversation to ask for its summary.
const SummaryInstruction = `Summarise the conversation above. Your summary will replace every message above it, so write what is needed to continue the work without them, under these headings:
1. Goals: what the user asked for, in their words where it matters, and the constraints they set.
2. Decisions: what was decided, and why.
3. Files: every file read, created or changed, and its current state.
4. Errors and fixes: the errors met and how they were fixed, or that they are still open.
5. Todo list: the tasks, which are done, and the current step.
6. What remains: the next steps.
Keep paths, identifiers, commands and error messages exact. If the conversation starts with an earlier summary, fold it in. Reply with the summary only, as plain text, and call no tools.`

// errEmptySummary is a summary call that returned no text.
var errEmptySummary = errors.New("compact: the summary reply holds no text")

// IsSummary reports whether m is a summary written by compaction.
func IsSummary(m llm.Message) bool {
	if m.Role != llm.RoleUser || len(m.Content) == 0 {
		return false
	}
	t, ok := m.Content[0].(*llm.Text)
	return ok && strings.HasPrefix(t.Text, SummaryHeader)
}

// summaryMessage returns the user message holding a summary.
func summaryMessage(text string) llm.Message {
	return llm.UserText(SummaryHeader + "\n\n" + text)
}

// withSummary returns a new history: the summary, then tail.
func withSummary(text string, tail []llm.Message) []llm.Message {
	out := make([]llm.Message, 0, 1+len(tail))
	out = append(out, summaryMessage(text))
	return append(out, tail...)
}

// summaryOf returns a summary of p.msgs[:cut] and the layer that wrote it:
// the model's (summarize) or, when there is no provider or the call fails,
// the extractive one. Only a cancelled ctx is an error.
func (p *pass) summaryOf(ctx context.Context, cut int) (string, string, error) {
	original := p.msgs[:cut]
	if p.snipped {
		// msgs still lines up with the request: summarise what the model saw.
		original = p.req.Messages[:cut]
	}
	focus := p.focus()
	if p.cfg.Provider == nil {
		return extractive(original, focus), LayerExtractive, nil
	}
	src := p.summaryInput(original, cut)
	if src == nil {
		p.cfg.Logger.Warn("compact: the messages to summarise do not fit a summary request; using an extractive summary",
			"messages", cut)
		return extractive(original, focus), LayerExtractive, nil
	}
	text, usage, err := p.c.summarize(ctx, p.req, src, focus)
	p.usage.Add(usage)
	p.calls++
	if err != nil {
		if ctx.Err() != nil {
			return "", "", fmt.Errorf("compact: summary: %w", context.Cause(ctx))
		}
		p.cfg.Logger.Warn("compact: summary call failed; using an extractive summary", "err", err)
		return extractive(original, focus), LayerExtractive, nil
	}
	return text, LayerSummarize, nil
}

// summaryInput returns the messages the summary request carries before its
// instruction: the conversation as the model last saw it, byte for byte, so
// a prompt cache serves it (CTX-5) — or, when that would not fit the window,
// the same messages with their tool outputs snipped (head and tail kept).
// nil means not even that fits.
func (p *pass) summaryInput(original []llm.Message, cut int) []llm.Message {
	room := p.b.Window - p.b.System - p.b.Tools - p.cfg.SummaryMaxTokens -
		tokens.Estimate(SummaryInstruction) - 2*messageOverhead
	if p.scaled(p.size(original)) <= room {
		return original
	}
	snipped := p.msgs[:cut]
	if !p.snipped {
		snipped, _, _ = shrink(original, 0, len(original), p.cfg)
	}
	if p.scaled(p.size(snipped)) <= room {
		return snipped
	}
	return nil
}

// size estimates msgs without touching the cache.
func (p *pass) size(msgs []llm.Message) int {
	p.c.mu.Lock()
	defer p.c.mu.Unlock()
	n := 0
	for i := range msgs {
		n += p.c.est.message(&msgs[i])
	}
	return n
}

func (p *pass) focus() *agent.Focus {
	if p.task != nil {
		return p.task
	}
	if p.cfg.Focus == nil {
		return nil
	}
	f := p.cfg.Focus()
	return &f
}

// summarize asks the model for a summary of msgs. The call's usage is
// returned even when the summary is unusable: it was paid for (SESS-4).
func (c *Compactor) summarize(ctx context.Context, req *llm.Request, msgs []llm.Message, focus *agent.Focus) (string, llm.Usage, error) {
	resp, err := llm.Complete(ctx, c.cfg.Provider, c.summaryRequest(req, msgs, focus))
	if err != nil {
		return "", llm.Usage{}, err
	}
	text := strings.TrimSpace(resp.Message.TextOf())
	if text == "" {
		return "", resp.Usage, errEmptySummary
	}
	return text, resp.Usage, nil
}

// summaryRequest is req with msgs as its messages plus the instruction: the
// same system prompt, tools, thinking and cache key, so that everything but
// the instruction is a prefix the provider has cached (SPEC CTX-5, PROV-6).
func (c *Compactor) summaryRequest(req *llm.Request, msgs []llm.Message, focus *agent.Focus) *llm.Request {
	out := *req
	if c.cfg.Model != "" {
		out.Model = c.cfg.Model
	}
	out.MaxTokens = c.cfg.SummaryMaxTokens
	text := SummaryInstruction
	if f := renderFocus(focus); f != "" {
		text += "\n\nTask state tracked by the harness:\n" + f
	}
	out.Messages = append(msgs[:len(msgs):len(msgs)], llm.UserText(text))
	return &out
}

// renderFocus writes the task state as a short list; "" when there is none.
func renderFocus(f *agent.Focus) string {
	if f == nil {
		return ""
	}
	var b strings.Builder
	line := func(label string, items []string) {
		if len(items) > 0 {
			fmt.Fprintf(&b, "- %s: %s\n", label, strings.Join(items, "; "))
		}
	}
	if f.Goal != "" {
		line("Current goal", []string{f.Goal})
	}
	line("Earlier goals", f.RecentGoals)
	reads := make([]string, 0, len(f.FilesRead))
	for _, r := range f.FilesRead {
		if r.Start > 0 && r.End > 0 {
			reads = append(reads, fmt.Sprintf("%s (lines %d-%d)", r.Path, r.Start, r.End))
		} else {
			reads = append(reads, r.Path)
		}
	}
	line("Files read", reads)
	line("Files changed", f.FilesChanged)
	line("Verified", f.Verified)
	return strings.TrimSuffix(b.String(), "\n")
}
