package tui

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/charmbracelet/x/ansi"
)

// maxDiffLines bounds the diff lines shown for one edit.
const maxDiffLines = 16

// maxDiffInput bounds the lines of each side a diff is computed over; a
// longer edit shows its first lines as they are.
const maxDiffInput = 400

// editDiff is the change an edit tool's input makes, as diff lines ("-"
// removed, "+" added, " " kept), for the tool card and the approval
// dialog (SPEC CLI-6); nil when name is not an edit tool or the input is
// not one.
func editDiff(name string, input json.RawMessage) []string {
	var in struct {
		Path      string  `json:"path"`
		OldString string  `json:"old_string"`
		NewString string  `json:"new_string"`
		Content   *string `json:"content"`
		Edits     []struct {
			OldString string `json:"old_string"`
			NewString string `json:"new_string"`
		} `json:"edits"`
	}
	if json.Unmarshal(input, &in) != nil {
		return nil
	}
	var out []string
	switch name {
	case "edit_file":
		out = lineDiff(in.OldString, in.NewString)
	case "multi_edit":
		for i, e := range in.Edits {
			if i > 0 {
				out = append(out, "…")
			}
			out = append(out, lineDiff(e.OldString, e.NewString)...)
		}
	case "write_file":
		if in.Content == nil {
			return nil
		}
		out = lineDiff("", *in.Content)
	default:
		return nil
	}
	return out
}

// lineDiff is a line diff of a and b: the longest common subsequence of
// their lines kept, the rest removed or added.
func lineDiff(a, b string) []string {
	al, bl := splitLines(a), splitLines(b)
	if len(al) > maxDiffInput || len(bl) > maxDiffInput {
		al, bl = al[:min(len(al), maxDiffInput)], bl[:min(len(bl), maxDiffInput)]
	}
	// lcs[i][j] is the LCS length of al[i:] and bl[j:].
	lcs := make([][]int, len(al)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(bl)+1)
	}
	for i := len(al) - 1; i >= 0; i-- {
		for j := len(bl) - 1; j >= 0; j-- {
			if al[i] == bl[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var out []string
	i, j := 0, 0
	for i < len(al) || j < len(bl) {
		switch {
		case i < len(al) && j < len(bl) && al[i] == bl[j]:
			out = append(out, " "+al[i])
			i, j = i+1, j+1
		case i < len(al) && (j == len(bl) || lcs[i+1][j] >= lcs[i][j+1]):
			out = append(out, "-"+al[i])
			i++
		default:
			out = append(out, "+"+bl[j])
			j++
		}
	}
	return out
}

// splitLines splits s into lines; "" has none.
func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}

// diffView renders diff lines, red and green, at most maxDiffLines, each
// cut to width.
func (m *model) diffView(lines []string, indent string, width int) string {
	var b strings.Builder
	for i, l := range lines {
		if i == maxDiffLines {
			b.WriteString("\n" + m.st.dim.Render(fmt.Sprintf("%s… +%d diff lines", indent, len(lines)-i)))
			break
		}
		text := ansi.Truncate(strings.ReplaceAll(ansi.Strip(l), "\t", "  "), max(10, width), "…")
		style := m.st.dim
		switch {
		case strings.HasPrefix(l, "+"):
			style = m.st.ok
		case strings.HasPrefix(l, "-"):
			style = m.st.bad
		}
		if i > 0 {
			b.WriteString("\n")
		}
		b.WriteString(indent + style.Render(text))
	}
	return b.String()
}
