package builtin

import (
	"context"
	"fmt"
	"os"
	osexec "os/exec"
	"regexp"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/reinhq/rein/tool"
)

// Limits of grep.
const (
	grepMaxMatches = 250 // match lines (content mode) or files (other modes)
	grepMaxLineLen = 500 // bytes of a line shown
	grepMaxContext = 20  // context lines either side
)

// Output modes of grep.
const (
	modeContent = "content"
	modeFiles   = "files_with_matches"
	modeCount   = "count"
)

var grepSchema = tool.NewStaticSchema[grepIn](func(s *jsonschema.Schema) {
	enum(prop(s, "output_mode"), modeContent, modeFiles, modeCount)
	minimum(prop(s, "context"), 0)
})

type grepIn struct {
	Pattern         string `json:"pattern" jsonschema:"RE2, matched per line"`
	Path            string `json:"path,omitempty" jsonschema:"file or directory"`
	Glob            string `json:"glob,omitempty" jsonschema:"e.g. src/**/*.{ts,tsx}"`
	OutputMode      string `json:"output_mode,omitempty" jsonschema:"default files_with_matches"`
	CaseInsensitive bool   `json:"case_insensitive,omitempty"`
	Context         int    `json:"context,omitempty" jsonschema:"lines around matches"`
}

const grepDesc = "Searches file contents by regular expression; skips .git, binary and .gitignored files. " +
	"At most 250 results: narrow with path or glob. Content mode prints each path, then `N:line` " +
	"(match) or `N-line` (context)."

// GrepOptions configures the grep tool. The zero value uses rg from PATH
// when present.
type GrepOptions struct {
	// Ripgrep is the rg executable; empty looks it up in PATH at each call.
	Ripgrep string
	// NoRipgrep forces the pure Go engine.
	NoRipgrep bool
	// Exclude lists the sensitive files never searched nor shown, as
	// patterns like those of [tool.DefaultSensitiveFiles] (a leading !
	// makes an exception). Nil means tool.DefaultSensitiveFiles; an empty,
	// non-nil list excludes nothing.
	Exclude []string
	// Fence bounds the files and directories it searches (see [Fence]).
	Fence Fence
}

// NewGrep returns the grep tool.
func NewGrep(opts GrepOptions) tool.Tool {
	return tool.DefineStatic("grep", grepDesc, metaRead, grepSchema, func(ctx context.Context, call tool.Call, in grepIn) (tool.Result, error) {
		return runGrep(ctx, call, in, opts)
	})
}

// grepQuery is one search, as both engines take it.
type grepQuery struct {
	pattern         string
	re              *regexp.Regexp
	caseInsensitive bool
	base            string // absolute file or directory
	isFile          bool
	glob            string
	mode            string
	context         int
	limit           int
	exclude         exclusion
	// fence, when it has a Root, judges each file the Go engine opens
	// by what was opened (see [fencedBackend.readOpened]).
	fence Fence
}

// grepLine is one line of output: a match or context.
type grepLine struct {
	N     int
	Text  string
	Match bool
}

// grepFile is what a search found in one file.
type grepFile struct {
	Path  string // absolute
	Lines []grepLine
	Count int // matching lines
}

// grepResult is what an engine found, files in path order. More says a
// content search stopped at limit+1 matches.
type grepResult struct {
	Files []grepFile
	More  bool
}

func runGrep(ctx context.Context, call tool.Call, in grepIn, opts GrepOptions) (tool.Result, error) {
	q, res := newGrepQuery(call, in, opts)
	if res != nil {
		return *res, nil
	}
	var (
		r      grepResult
		err    error
		engine = "go"
	)
	if rg := opts.ripgrep(); rg != "" {
		engine = "rg"
		r, err = grepRG(ctx, rg, q)
		if err != nil && ctx.Err() == nil {
			engine = "go" // rg failed to run: fall back
			r, err = grepGo(ctx, q)
		}
	} else {
		r, err = grepGo(ctx, q)
	}
	if ctx.Err() != nil {
		return tool.Errorf("grep was cancelled: %v", ctx.Err()), nil
	}
	if err != nil {
		return tool.Errorf("grep stopped: %v", err), nil
	}
	out := formatGrep(call, q, r)
	if len(r.Files) == 0 {
		out = fmt.Sprintf("No matches for /%s/ in %s.\n", q.pattern, displayPath(call, q.base))
	}
	result := tool.Text(out)
	result.Metadata = map[string]any{"path": q.base, "files": len(r.Files), "engine": engine}
	return result, nil
}

// newGrepQuery checks the input; a non-nil result is the error to return.
func newGrepQuery(call tool.Call, in grepIn, opts GrepOptions) (grepQuery, *tool.Result) {
	fail := func(format string, args ...any) (grepQuery, *tool.Result) {
		r := tool.Errorf(format, args...)
		return grepQuery{}, &r
	}
	if in.Pattern == "" {
		return fail("pattern is empty: give a regular expression")
	}
	expr := in.Pattern
	if in.CaseInsensitive {
		expr = "(?i)" + expr
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		return fail("invalid regular expression: %v", err)
	}
	mode := in.OutputMode
	if mode == "" {
		mode = modeFiles
	}
	if mode != modeContent && mode != modeFiles && mode != modeCount {
		return fail("output_mode must be content, files_with_matches or count, not %q", in.OutputMode)
	}
	q := grepQuery{pattern: in.Pattern, re: re, caseInsensitive: in.CaseInsensitive, base: resolvePath(call, in.Path),
		glob: in.Glob, mode: mode, context: min(max(in.Context, 0), grepMaxContext), limit: grepMaxMatches,
		exclude: newExclusion(opts.Exclude).withFence(opts.Fence), fence: opts.Fence}
	if mode != modeContent {
		q.context = 0
	}
	if r := opts.Fence.refuse(q.base); r != nil {
		return grepQuery{}, r
	}
	info, err := os.Stat(q.base)
	if err != nil {
		shown := in.Path
		if shown == "" {
			shown = "."
		}
		r := statError(shown, q.base, err)
		return grepQuery{}, &r
	}
	q.isFile = !info.IsDir()
	if g, ok := q.exclude.skipsBase(call.WorkDir, q.base); ok {
		return fail("%s is a sensitive file or lies in one (matches %s); grep never searches those", displayPath(call, q.base), g)
	}
	return q, nil
}

// ripgrep returns the rg executable to use, or "" for the Go engine.
func (o GrepOptions) ripgrep() string {
	// Behind a workspace's fence, rg would open files by path, and a
	// directory swapped for a link during its walk would lead it out
	// (SPEC API-9); the Go engine checks each file it opens.
	if o.NoRipgrep || o.Fence.Root != "" {
		return ""
	}
	if o.Ripgrep != "" {
		return o.Ripgrep
	}
	p, err := osexec.LookPath("rg")
	if err != nil {
		return ""
	}
	return p
}

// formatGrep renders a result the same way whichever engine produced it.
func formatGrep(call tool.Call, q grepQuery, r grepResult) string {
	var b strings.Builder
	switch q.mode {
	case modeContent:
		formatContent(&b, call, q, r)
	case modeFiles:
		for i, f := range r.Files {
			if i == q.limit {
				fmt.Fprintf(&b, "… %d more files not shown; narrow the path or glob\n", len(r.Files)-q.limit)
				break
			}
			b.WriteString(displayPath(call, f.Path) + "\n")
		}
	case modeCount:
		total := 0
		for i, f := range r.Files {
			total += f.Count
			if i < q.limit {
				fmt.Fprintf(&b, "%s:%d\n", displayPath(call, f.Path), f.Count)
			} else if i == q.limit {
				fmt.Fprintf(&b, "… %d more files not shown\n", len(r.Files)-q.limit)
			}
		}
		fmt.Fprintf(&b, "Total: %s in %s\n", plural(total, "matching line"), plural(len(r.Files), "file"))
	}
	return b.String()
}

// formatContent writes matching lines grouped by file, cut after q.limit
// matches (keeping that match's trailing context).
func formatContent(b *strings.Builder, call tool.Call, q grepQuery, r grepResult) {
	matches := 0
	cut := false
	for fi, f := range r.Files {
		if cut || matches == q.limit {
			cut = true
			break
		}
		if fi > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(displayPath(call, f.Path) + "\n")
		prev, last := 0, 0
		for _, l := range f.Lines {
			if matches == q.limit && (l.Match || l.N > last+q.context) {
				cut = true
				break
			}
			if q.context > 0 && prev > 0 && l.N > prev+1 {
				b.WriteString("--\n")
			}
			sep := "-"
			if l.Match {
				sep = ":"
				matches++
				last = l.N
			}
			text, _ := cutLine(l.Text, grepMaxLineLen)
			fmt.Fprintf(b, "%d%s%s\n", l.N, sep, text)
			prev = l.N
		}
	}
	if cut || r.More {
		fmt.Fprintf(b, "\n(showing the first %d matches; there are more: narrow the pattern, path or glob)\n", q.limit)
	}
}
