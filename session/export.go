package session

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"iter"
	"strings"

	"github.com/reinhq/rein/llm"
)

// Limits of a tool result shown by [ExportMarkdown].
const (
	exportResultLines = 20
	exportResultChars = 2000
	exportCallChars   = 120
)

// ExportJSONL writes entries as JSON Lines, one entry a line, in the
// encoding stores use (SPEC SESS-3). Unstored entries (Seq 0, damage
// reports) are left out. It stops at the first error of entries.
func ExportJSONL(w io.Writer, entries iter.Seq2[Entry, error]) error {
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	for e, err := range entries {
		if err != nil {
			return err
		}
		if e.Seq == 0 {
			continue
		}
		if err := enc.Encode(&e); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// ExportMarkdown writes the conversation of st as a readable Markdown
// document (SPEC SESS-3): a title and the session's figures, then a heading
// per speaker; each tool call on one line (`▸ bash: go test ./...`) followed
// by its result, fenced and cut to 20 lines; thinking folded in a
// <details> element; images as a note.
func ExportMarkdown(w io.Writer, st *State) error {
	bw := bufio.NewWriter(w)
	writeHeader(bw, st)
	x := &exporter{w: bw, subagents: st.Subagents}
	x.conversation(st.Messages, 0)
	return bw.Flush()
}

// exporter writes a conversation, with the transcripts of the sub-agents
// its calls started folded under those calls.
type exporter struct {
	w         *bufio.Writer
	subagents []SubagentTranscript
	depth     int // of the conversation being written: 0 for the session's
}

func (x *exporter) conversation(msgs []llm.Message, depth int) {
	outer := x.depth
	x.depth = depth
	for i, m := range msgs {
		var next *llm.Message
		if i+1 < len(msgs) {
			next = &msgs[i+1]
		}
		x.message(m, next)
	}
	x.depth = outer
}

// subagent writes the transcripts of the sub-agents call started, folded.
func (x *exporter) subagent(callID string) {
	for _, t := range x.subagents {
		if t.ParentCallID != callID || t.Depth != x.depth+1 {
			continue
		}
		end := "cut off"
		if t.End != nil {
			end = fmt.Sprintf("%s after %d turns, %d tokens in, %d out", t.End.Reason, t.End.Turns, t.End.Usage.PromptTokens(), t.End.Usage.OutputTokens)
		}
		fmt.Fprintf(x.w, "<details><summary>Sub-agent %s (%s)</summary>\n\n", t.Agent, end)
		x.conversation(t.Messages, t.Depth)
		x.w.WriteString("</details>\n\n")
	}
}

func writeHeader(w *bufio.Writer, st *State) {
	s := st.Session
	if s == nil {
		s = &Session{}
	}
	title := s.Title
	if title == "" {
		title = s.Preview
	}
	if title == "" {
		title = "Session " + s.ID
	}
	fmt.Fprintf(w, "# %s\n\n", oneLine(title))
	fmt.Fprintf(w, "- Session: `%s`\n", s.ID)
	if s.WorkDir != "" {
		fmt.Fprintf(w, "- Directory: `%s`\n", s.WorkDir)
	}
	if s.ParentID != "" {
		fmt.Fprintf(w, "- Forked from `%s` at entry %d\n", s.ParentID, s.ForkSeq)
	}
	if !s.CreatedAt.IsZero() {
		fmt.Fprintf(w, "- Created: %s; updated: %s\n", s.CreatedAt.UTC().Format("2006-01-02 15:04 UTC"), s.UpdatedAt.UTC().Format("2006-01-02 15:04 UTC"))
	}
	if s.Model != "" {
		fmt.Fprintf(w, "- Model: %s\n", s.Model)
	}
	if s.Runs > 0 {
		u := s.Usage
		fmt.Fprintf(w, "- Runs: %d; tokens: %d in, %d out, %d cache read, %d cache write; cost: $%.4f\n",
			s.Runs, u.InputTokens, u.OutputTokens, u.CacheReadTokens, u.CacheWriteTokens, s.CostUSD)
	}
	if !st.Heal.Empty() {
		fmt.Fprintf(w, "- Healed on load: %s\n", st.Heal.String())
	}
	w.WriteString("\n")
}

// message writes m; next is the message after it, whose results are
// shown under m's calls.
func (x *exporter) message(m llm.Message, next *llm.Message) {
	w := x.w
	var results map[string]*llm.ToolResult
	if next != nil && len(m.ToolUses()) > 0 {
		results = map[string]*llm.ToolResult{}
		for _, r := range next.ToolResults() {
			results[r.ToolUseID] = r
		}
	}
	heading := false
	for _, b := range m.Content {
		if _, ok := b.(*llm.ToolResult); ok {
			continue // shown under its call
		}
		if !heading {
			fmt.Fprintf(w, "%s %s\n\n", strings.Repeat("#", min(6, 2+x.depth)), speaker(m))
			heading = true
		}
		x.block(b, results)
	}
}

func speaker(m llm.Message) string {
	switch m.Role {
	case llm.RoleUser:
		return "User"
	case llm.RoleAssistant:
		if m.Model != "" {
			return "Assistant (" + m.Model + ")"
		}
		return "Assistant"
	}
	return string(m.Role)
}

func (x *exporter) block(b llm.Block, results map[string]*llm.ToolResult) {
	w := x.w
	switch b := b.(type) {
	case *llm.Text:
		if t := strings.TrimSpace(b.Text); t != "" {
			fmt.Fprintf(w, "%s\n\n", t)
		}
	case *llm.Thinking:
		if t := strings.TrimSpace(b.Text); t != "" && !b.Redacted {
			fmt.Fprintf(w, "<details><summary>Thinking</summary>\n\n%s\n\n</details>\n\n", t)
		}
	case *llm.Image:
		fmt.Fprintf(w, "%s\n\n", imageNote(b))
	case *llm.ToolUse:
		r := results[b.ID]
		mark := ""
		if r != nil && r.IsError {
			mark = " (failed)"
		}
		fmt.Fprintf(w, "▸ %s: %s%s\n\n", b.Name, callSummary(b.Input), mark)
		x.subagent(b.ID)
		if r != nil {
			writeResult(w, r)
		}
	}
}

func imageNote(im *llm.Image) string {
	if im.URL != "" && len(im.Data) == 0 {
		return fmt.Sprintf("[image: %s]", im.URL)
	}
	return fmt.Sprintf("[image: %s, %.1f KB]", im.MediaType, float64(len(im.Data))/1024)
}

func writeResult(w *bufio.Writer, r *llm.ToolResult) {
	var parts []string
	for _, b := range r.Content {
		switch b := b.(type) {
		case *llm.Text:
			parts = append(parts, b.Text)
		case *llm.Image:
			parts = append(parts, imageNote(b))
		}
	}
	text := truncateResult(strings.TrimRight(strings.Join(parts, "\n"), "\n"))
	if text == "" {
		return
	}
	fence := strings.Repeat("`", max(3, longestRun(text, '`')+1))
	fmt.Fprintf(w, "%s\n%s\n%s\n\n", fence, text, fence)
}

// truncateResult keeps the first lines of a result and says how much was cut.
func truncateResult(text string) string {
	lines := strings.Split(text, "\n")
	if len(lines) > exportResultLines {
		out := strings.Join(lines[:exportResultLines], "\n")
		if len(out) <= exportResultChars {
			return out + fmt.Sprintf("\n… (%d more lines)", len(lines)-exportResultLines)
		}
	}
	if len(text) <= exportResultChars {
		return text
	}
	out := validPrefix(text, exportResultChars)
	return out + fmt.Sprintf("\n… (%d more characters)", len(text)-len(out))
}

// callSummary shows a call's input on one line: its main argument when it
// has one (command, path, pattern, url, query…), else its JSON.
func callSummary(input json.RawMessage) string {
	var obj map[string]any
	text := string(input)
	if json.Unmarshal(input, &obj) == nil {
		for _, k := range []string{"command", "file_path", "path", "pattern", "url", "query", "description", "prompt", "name"} {
			if v, ok := obj[k].(string); ok && v != "" {
				text = v
				break
			}
		}
	}
	text = oneLine(text)
	if len(text) > exportCallChars {
		text = validPrefix(text, exportCallChars) + "…"
	}
	return text
}

// oneLine joins the lines of s with " ⏎ ".
func oneLine(s string) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(strings.TrimSpace(s), "\n", " ⏎ ")), " ")
}

// validPrefix cuts s to at most n bytes without splitting a UTF-8 character.
func validPrefix(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n]
}

func longestRun(s string, c byte) int {
	best, run := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			run++
			best = max(best, run)
		} else {
			run = 0
		}
	}
	return best
}
