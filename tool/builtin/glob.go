package builtin

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/reinhq/rein/tool"
)

// globMaxFiles caps the files glob lists.
const globMaxFiles = 100

var globSchema = tool.NewStaticSchema[globIn](nil)

type globIn struct {
	Pattern string `json:"pattern" jsonschema:"relative to path; **/*.go for all depths; {a,b} alternatives"`
	Path    string `json:"path,omitempty" jsonschema:"default: the working directory"`
}

const globDesc = "Finds files by name pattern, newest first, at most 100; skips .git and .gitignored files."

// GlobOptions configures the glob tool. The zero value is the default.
type GlobOptions struct {
	// Exclude lists the sensitive files never listed, as patterns like
	// those of [tool.DefaultSensitiveFiles] (a leading ! makes an
	// exception). Nil means tool.DefaultSensitiveFiles; an empty, non-nil
	// list excludes nothing.
	Exclude []string
	// Fence bounds the directories it searches (see [Fence]).
	Fence Fence
}

// NewGlob returns the glob tool, configured by at most one GlobOptions.
func NewGlob(opts ...GlobOptions) tool.Tool {
	var o GlobOptions
	if len(opts) > 0 {
		o = opts[0]
	}
	ex := newExclusion(o.Exclude).withFence(o.Fence)
	return tool.DefineStatic("glob", globDesc, metaRead, globSchema, func(ctx context.Context, call tool.Call, in globIn) (tool.Result, error) {
		return runGlob(ctx, call, in, ex, o.Fence)
	})
}

type globHit struct {
	path  string
	mtime time.Time
}

func runGlob(ctx context.Context, call tool.Call, in globIn, ex exclusion, fence Fence) (tool.Result, error) {
	pattern := filepath.ToSlash(in.Pattern)
	if pattern == "" {
		return tool.Errorf("pattern is empty: give a glob such as **/*.go"), nil
	}
	if !doublestar.ValidatePattern(pattern) {
		return tool.Errorf("invalid glob pattern %q (check brackets and braces)", in.Pattern), nil
	}
	base := resolvePath(call, in.Path)
	if filepath.IsAbs(in.Pattern) {
		base, pattern = "/", strings.TrimPrefix(pattern, "/")
	}
	// Start the walk at the pattern's fixed directory part.
	if dir, rest := doublestar.SplitPattern(pattern); dir != "." && rest != "" {
		base, pattern = filepath.Join(base, filepath.FromSlash(dir)), rest
	}
	if slices.Contains(strings.Split(pattern, "/"), "..") {
		return tool.Errorf("glob pattern %q climbs out with .. after a wildcard, which matches nothing; put the directory in path instead", in.Pattern), nil
	}
	if r := fence.refuse(base); r != nil {
		return *r, nil
	}
	if g, ok := ex.skipsBase(call.WorkDir, base); ok {
		return tool.Errorf("%s is a sensitive file or lies in one (matches %s); glob never lists those", displayPath(call, base), g), nil
	}
	if info, err := os.Stat(base); err != nil || !info.IsDir() {
		if err == nil {
			return tool.Errorf("%s is not a directory", displayPath(call, base)), nil
		}
		return statError(displayPath(call, base), base, err), nil
	}
	depth := -1
	if !strings.Contains(pattern, "**") {
		depth = strings.Count(pattern, "/")
	}
	var hits []globHit
	err := walkFiles(ctx, base, depth, ex, func(abs, rel string, d fs.DirEntry) error {
		if ok, _ := doublestar.Match(pattern, rel); !ok {
			return nil
		}
		h := globHit{path: abs}
		if info, err := d.Info(); err == nil {
			h.mtime = info.ModTime()
		}
		hits = append(hits, h)
		return nil
	})
	if err != nil {
		return tool.Errorf("glob stopped: %v", err), nil
	}
	sort.SliceStable(hits, func(i, j int) bool {
		if !hits[i].mtime.Equal(hits[j].mtime) {
			return hits[i].mtime.After(hits[j].mtime)
		}
		return hits[i].path < hits[j].path
	})
	var b strings.Builder
	for i, h := range hits {
		if i == globMaxFiles {
			fmt.Fprintf(&b, "… %d more not shown; narrow the pattern or path\n", len(hits)-globMaxFiles)
			break
		}
		b.WriteString(displayPath(call, h.path))
		b.WriteByte('\n')
	}
	if len(hits) == 0 {
		fmt.Fprintf(&b, "No files match %s in %s.\n", in.Pattern, displayPath(call, base))
	}
	res := tool.Text(b.String())
	res.Metadata = map[string]any{"path": base, "matches": len(hits)}
	return res, nil
}
