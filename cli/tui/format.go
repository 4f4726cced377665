package tui

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"
)

// splitStable splits markdown text being streamed into the blocks that are
// finished (up to the last blank line outside a code fence) and the rest.
func splitStable(text string) (stable, rest string) {
	inFence := false
	cut := -1
	off := 0
	lines := strings.SplitAfter(text, "\n")
	for i, l := range lines {
		t := strings.TrimSpace(l)
		if strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~") {
			inFence = !inFence
		}
		off += len(l)
		if !inFence && t == "" && i > 0 && i < len(lines)-1 {
			cut = off
		}
	}
	if cut <= 0 {
		return "", text
	}
	return text[:cut], text[cut:]
}

// primaryKeys are the input fields that best describe a tool call, in order.
var primaryKeys = []string{"command", "file_path", "path", "pattern", "url", "query", "name", "prompt", "description", "question"}

// toolSummary describes a call as name(main argument): bash(go test ./...).
func toolSummary(name string, input json.RawMessage) string {
	arg := PrimaryArg(input)
	if arg == "" {
		return name
	}
	return name + "(" + oneLine(arg, 80) + ")"
}

// PrimaryArg is the input field that best describes a tool call: the
// first non-empty text of command, file_path, path, pattern, url, query
// (then name, prompt, description, question), else the first text field
// by name; "" when the input holds no text. The terminal UI and the CLI's
// summaries of calls both use it.
func PrimaryArg(input json.RawMessage) string {
	in := toolInputJSON(input)
	if in == nil {
		return ""
	}
	for _, k := range primaryKeys {
		if s, ok := in[k].(string); ok && s != "" {
			return s
		}
	}
	keys := make([]string, 0, len(in))
	for k := range in {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if s, ok := in[k].(string); ok && s != "" {
			return s
		}
	}
	return ""
}

// primaryArg is [PrimaryArg].
func primaryArg(input json.RawMessage) string { return PrimaryArg(input) }

// inputLines describes a call's input for a permission question: the
// command or path, else its fields, at most max lines.
func inputLines(input json.RawMessage, maxLines int) []string {
	in := toolInputJSON(input)
	if in == nil {
		if len(input) == 0 {
			return nil
		}
		return []string{string(input)}
	}
	for _, k := range primaryKeys[:5] {
		if s, ok := in[k].(string); ok && s != "" {
			return clipLines(strings.Split(strings.TrimRight(s, "\n"), "\n"), maxLines)
		}
	}
	keys := make([]string, 0, len(in))
	for k := range in {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var out []string
	for _, k := range keys {
		v, _ := json.Marshal(in[k])
		if s, ok := in[k].(string); ok {
			v = []byte(s)
		}
		out = append(out, k+": "+string(v))
	}
	return clipLines(out, maxLines)
}

// clipLines keeps at most n lines, saying how many were left out.
func clipLines(lines []string, n int) []string {
	if len(lines) <= n {
		return lines
	}
	return append(lines[:n-1:n-1], fmt.Sprintf("… +%d lines", len(lines)-n+1))
}

// preview returns the first n non-empty lines of a tool's output, and how
// many lines there are in all.
func preview(out string, n int) ([]string, int) {
	all := strings.Split(strings.TrimRight(out, "\n"), "\n")
	var lines []string
	count := 0
	for _, l := range all {
		if strings.TrimSpace(l) == "" && len(lines) == 0 {
			continue
		}
		count++
		if len(lines) < n {
			lines = append(lines, strings.TrimRight(l, " \t\r"))
		}
	}
	return lines, count
}

// oneLine flattens s to one line at most width columns wide, without
// escape sequences or control characters.
func oneLine(s string, width int) string {
	s = strings.Join(strings.Fields(sanitize(ansi.Strip(s))), " ")
	if width > 1 && ansi.StringWidth(s) > width {
		s = ansi.Truncate(s, width-1, "") + "…"
	}
	return s
}

// fmtDuration formats a tool's duration: 0.4s, 7.0s, 1m05s.
func fmtDuration(ms int64) string {
	d := time.Duration(ms) * time.Millisecond
	if d < time.Minute {
		return fmt.Sprintf("%.1fs", d.Seconds())
	}
	return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
}

// fmtDelay formats a retry delay or a countdown: 2s, 1.5s, 4m59s.
func fmtDelay(d time.Duration) string {
	if d < 10*time.Second && d%time.Second != 0 {
		return fmt.Sprintf("%.1fs", d.Seconds())
	}
	d = d.Round(time.Second)
	if d < time.Minute {
		return fmt.Sprintf("%ds", int(d.Seconds()))
	}
	return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
}

// fmtTokens formats a token count: 950, 12.3k, 1.2M.
func fmtTokens(n int64) string {
	switch {
	case n < 1000:
		return fmt.Sprintf("%d", n)
	case n < 1_000_000:
		return fmt.Sprintf("%.1fk", float64(n)/1000)
	}
	return fmt.Sprintf("%.1fM", float64(n)/1_000_000)
}

// fmtCost formats a cost in USD.
func fmtCost(usd float64) string {
	if usd < 1 {
		return fmt.Sprintf("$%.4f", usd)
	}
	return fmt.Sprintf("$%.2f", usd)
}

// lineCount is the number of lines of s.
func lineCount(s string) int {
	if s == "" {
		return 0
	}
	return strings.Count(s, "\n") + 1
}

// lastLines returns the last n lines of s.
func lastLines(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) <= n {
		return s
	}
	return strings.Join(lines[len(lines)-n:], "\n")
}

// splitRows splits s after the first lines that fill at most rows rows of
// a terminal width columns wide (a line wider than that wraps onto more
// rows; at least one line is taken, whatever its height). split is false
// when all of s fits, and rest is then empty.
func splitRows(s string, width, rows int) (head, rest string, split bool) {
	lines := strings.Split(s, "\n")
	used := 0
	for i, line := range lines {
		h := 1
		if w := ansi.StringWidth(line); width > 0 && w > width {
			h = (w + width - 1) / width
		}
		if i > 0 && used+h > max(rows, 1) {
			return strings.Join(lines[:i], "\n"), strings.Join(lines[i:], "\n"), true
		}
		used += h
	}
	return s, "", false
}
