package builtin

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"regexp"
	"sort"
	"strings"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/reinhq/rein/exec"
	"github.com/reinhq/rein/tool"
)

// Limits of the snippet an edit returns.
const (
	snippetContext  = 2   // unchanged lines shown around a change
	snippetMaxLines = 60  // lines shown in all
	snippetMaxLen   = 500 // bytes per line shown
)

// Edit is one exact string replacement.
type Edit struct {
	OldString  string `json:"old_string"`
	NewString  string `json:"new_string"`
	ReplaceAll bool   `json:"replace_all,omitempty"`
}

// The schemas of edit_file's and multi_edit's inputs.
var (
	editSchema      = tool.NewStaticSchema[editIn](nil)
	multiEditSchema = tool.NewStaticSchema[multiEditIn](func(s *jsonschema.Schema) {
		one := 1
		prop(s, "edits").MinItems = &one
	})
)

type editIn struct {
	Path       string `json:"path"`
	OldString  string `json:"old_string"`
	NewString  string `json:"new_string"`
	ReplaceAll bool   `json:"replace_all,omitempty" jsonschema:"replace every occurrence"`
}

type multiEditIn struct {
	Path  string `json:"path"`
	Edits []Edit `json:"edits"`
}

const editDesc = "Replaces old_string with new_string in a file read first. old_string must match exactly " +
	"(indentation included, no line-number prefixes) and be unique unless replace_all; add context lines to " +
	"make it so."

const multiEditDesc = "Applies edit_file replacements to one file in order, each on the previous result; " +
	"all or none."

// NewEditFile returns the edit_file tool (SPEC TOOL-3, TOOL-6).
func NewEditFile(b exec.Backend, t *FileTracker) tool.Tool {
	b = fenced(b, Fence{})
	e := &fileEditor{b: b, t: t}
	return tool.DefineStatic("edit_file", editDesc, metaEdit, editSchema,
		func(ctx context.Context, call tool.Call, in editIn) (tool.Result, error) {
			return e.run(ctx, call, in.Path, []Edit{{OldString: in.OldString, NewString: in.NewString, ReplaceAll: in.ReplaceAll}})
		})
}

// NewMultiEdit returns the multi_edit tool.
func NewMultiEdit(b exec.Backend, t *FileTracker) tool.Tool {
	b = fenced(b, Fence{})
	e := &fileEditor{b: b, t: t}
	return tool.DefineStatic("multi_edit", multiEditDesc, metaEdit, multiEditSchema, func(ctx context.Context, call tool.Call, in multiEditIn) (tool.Result, error) {
		if len(in.Edits) == 0 {
			return tool.Errorf("edits is empty: give at least one replacement"), nil
		}
		return e.run(ctx, call, in.Path, in.Edits)
	})
}

type fileEditor struct {
	b exec.Backend
	t *FileTracker
}

func (e *fileEditor) run(ctx context.Context, call tool.Call, path string, edits []Edit) (tool.Result, error) {
	if path == "" {
		return tool.Errorf("path is empty: give the file to edit"), nil
	}
	abs := resolvePath(call, path)
	info, err := e.b.Stat(ctx, abs)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return tool.Errorf("%s does not exist; use write_file to create it", path), nil
	case err != nil:
		return tool.Errorf("cannot access %s: %v", path, err), nil
	case info.IsDir():
		return tool.Errorf("%s is a directory; give a file path", path), nil
	}
	old, err := e.b.ReadFile(ctx, abs)
	if err != nil {
		return tool.Errorf("cannot read %s: %v", path, err), nil
	}
	if res, ok := refuseUnread(e.t, path, abs, old); !ok {
		return res, nil
	}
	content, regions, replaced, err := applyEdits(string(old), edits)
	if err != nil {
		return tool.Errorf("%v", err), nil
	}
	if err := e.b.WriteFile(ctx, abs, []byte(content), info.Mode().Perm()); err != nil {
		return tool.Errorf("cannot write %s: %v", path, err), nil
	}
	recordWrite(ctx, e.b, e.t, abs, []byte(content))
	head := fmt.Sprintf("Edited %s: replaced %s.", path, plural(replaced, "occurrence"))
	if len(edits) > 1 {
		head = fmt.Sprintf("Applied %s to %s (%s replaced).", plural(len(edits), "edit"), path, plural(replaced, "occurrence"))
	}
	res := tool.Text(head + " Changed lines:\n" + snippet(content, regions))
	res.Metadata = map[string]any{"path": abs, "changed": abs, "edits": len(edits), "replacements": replaced}
	return res, nil
}

// editError says why an edit cannot be applied, in words the model can act on.
type editError struct {
	// Index is the edit's 0-based position in its list; Of is the list's length.
	Index, Of int
	Msg       string
}

func (e *editError) Error() string {
	if e.Of <= 1 {
		return e.Msg
	}
	return fmt.Sprintf("edit %d of %d: %s; no edits were applied", e.Index+1, e.Of, e.Msg)
}

// region is a byte range [start, end) of a file's new content.
type region struct{ start, end int }

// applyEdits applies edits to content in order and returns the new content,
// the byte ranges that changed in it and the number of replacements made.
// When an old_string is not found and the file uses CRLF line endings, the
// edit is retried with its newlines turned into CRLF. It returns an
// *editError, and nothing applied, when any edit fails.
func applyEdits(content string, edits []Edit) (string, []region, int, error) {
	var regions []region
	replaced := 0
	for i, ed := range edits {
		fail := func(msg string) (string, []region, int, error) {
			return "", nil, 0, &editError{Index: i, Of: len(edits), Msg: msg}
		}
		if ed.OldString == "" {
			return fail("old_string is empty; give the exact text to replace (use write_file to create a file)")
		}
		if ed.OldString == ed.NewString {
			return fail("old_string and new_string are identical; nothing would change")
		}
		n := strings.Count(content, ed.OldString)
		if n == 0 && strings.Contains(content, "\r\n") && strings.Contains(ed.OldString, "\n") && !strings.Contains(ed.OldString, "\r\n") {
			crlf := Edit{OldString: toCRLF(ed.OldString), NewString: toCRLF(ed.NewString), ReplaceAll: ed.ReplaceAll}
			if m := strings.Count(content, crlf.OldString); m > 0 {
				ed, n = crlf, m
			}
		}
		switch {
		case n == 0:
			return fail(notFound(content, ed.OldString, i > 0))
		case n > 1 && !ed.ReplaceAll:
			return fail(fmt.Sprintf("old_string occurs %d times; add surrounding lines to make it unique, or set replace_all to replace every occurrence", n))
		}
		content, regions = replaceTracked(content, ed.OldString, ed.NewString, ed.ReplaceAll, regions)
		if ed.ReplaceAll {
			replaced += n
		} else {
			replaced++
		}
	}
	return content, regions, replaced, nil
}

func toCRLF(s string) string { return strings.ReplaceAll(s, "\n", "\r\n") }

var lineNumberPrefix = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?m)^ *\d+\t`) })

// notFound explains a missing old_string: read_file line numbers pasted into
// it, indentation that differs, or text that is simply not there.
func notFound(content, old string, afterOthers bool) string {
	where := "the file"
	if afterOthers {
		where = "the file (after the previous edits of this call)"
	}
	if lineNumberPrefix().MatchString(old) {
		stripped := lineNumberPrefix().ReplaceAllString(old, "")
		if strings.Contains(content, stripped) {
			return "old_string includes read_file's line-number prefixes (number and tab); pass only the file's text"
		}
	}
	if n := normalizeSpace(old); n != "" && strings.Contains(normalizeSpace(content), n) {
		return "old_string was not found in " + where + " exactly, but matches when whitespace is ignored: " +
			"the indentation or spacing differs. Copy the text exactly as read_file shows it (after the tab)"
	}
	return "old_string was not found in " + where + "; read_file it again and copy the text exactly, whitespace included"
}

// normalizeSpace collapses every run of whitespace to one space and drops
// blank lines, to tell a whitespace-only mismatch.
func normalizeSpace(s string) string {
	var lines []string
	for _, l := range strings.Split(s, "\n") {
		if f := strings.Fields(l); len(f) > 0 {
			lines = append(lines, strings.Join(f, " "))
		}
	}
	return strings.Join(lines, "\n")
}

// replaceTracked replaces old by new in content (the first occurrence, or
// all) and returns the new content with the changed regions: the earlier
// regions moved to their new place, plus the replacements.
func replaceTracked(content, old, new string, all bool, regions []region) (string, []region) {
	var idx []int
	for from := 0; ; {
		i := strings.Index(content[from:], old)
		if i < 0 {
			break
		}
		idx = append(idx, from+i)
		from += i + len(old)
		if !all {
			break
		}
	}
	delta := len(new) - len(old)
	// mapPos moves a position of the old content to the new one; a position
	// inside a replaced span goes to the start or end of its replacement.
	mapPos := func(x int, isEnd bool) int {
		// k replacements end at or before x.
		k := sort.Search(len(idx), func(i int) bool { return idx[i]+len(old) > x })
		if k < len(idx) && x > idx[k] {
			if isEnd {
				return idx[k] + k*delta + len(new)
			}
			return idx[k] + k*delta
		}
		return x + k*delta
	}
	var b strings.Builder
	b.Grow(len(content) + len(idx)*delta)
	out := make([]region, 0, len(regions)+len(idx))
	for _, r := range regions {
		out = append(out, region{mapPos(r.start, false), mapPos(r.end, true)})
	}
	last := 0
	for _, p := range idx {
		b.WriteString(content[last:p])
		start := b.Len()
		b.WriteString(new)
		out = append(out, region{start, b.Len()})
		last = p + len(old)
	}
	b.WriteString(content[last:])
	return b.String(), mergeRegions(out)
}

// mergeRegions sorts regions and merges those that overlap or touch.
func mergeRegions(rs []region) []region {
	sort.Slice(rs, func(i, j int) bool { return rs[i].start < rs[j].start })
	out := rs[:0]
	for _, r := range rs {
		if n := len(out); n > 0 && r.start <= out[n-1].end {
			out[n-1].end = max(out[n-1].end, r.end)
			continue
		}
		out = append(out, r)
	}
	return out
}

// snippet shows the lines of content the regions touch, with a little
// context, numbered like read_file.
func snippet(content string, regions []region) string {
	type span struct{ from, to int } // 1-based lines, inclusive
	regions = append([]region(nil), regions...)
	sort.Slice(regions, func(i, j int) bool { return regions[i].start < regions[j].start })
	var spans []span
	line, at := 1, 0 // line number of byte offset at
	for _, r := range regions {
		line += strings.Count(content[at:r.start], "\n")
		at = r.start
		to := line + strings.Count(content[r.start:r.end], "\n")
		if r.end > r.start && content[r.end-1] == '\n' && to > line {
			to--
		}
		spans = append(spans, span{max(line-snippetContext, 1), to + snippetContext})
	}
	sort.Slice(spans, func(i, j int) bool { return spans[i].from < spans[j].from })
	var merged []span
	for _, s := range spans {
		if n := len(merged); n > 0 && s.from <= merged[n-1].to+1 {
			merged[n-1].to = max(merged[n-1].to, s.to)
			continue
		}
		merged = append(merged, s)
	}
	lines := strings.Split(content, "\n")
	if strings.HasSuffix(content, "\n") {
		lines = lines[:len(lines)-1]
	}
	var b strings.Builder
	shown := 0
	for i, s := range merged {
		if i > 0 {
			b.WriteString("   ...\n")
		}
		for n := s.from; n <= min(s.to, len(lines)); n++ {
			if shown == snippetMaxLines {
				b.WriteString("   ... (more changes not shown; read_file to see them)\n")
				return b.String()
			}
			l, _ := cutLine(strings.TrimSuffix(lines[n-1], "\r"), snippetMaxLen)
			numbered(&b, n, l)
			shown++
		}
	}
	if shown == 0 {
		b.WriteString("   (the file is now empty)\n")
	}
	return b.String()
}
