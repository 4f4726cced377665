package builtin

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/reinhq/rein/tool"
)

// listMaxEntries caps what list_dir shows.
const listMaxEntries = 1000

var listSchema = tool.NewStaticSchema[listIn](nil)

type listIn struct {
	Path string `json:"path,omitempty" jsonschema:"default: the working directory"`
}

const listDesc = "Lists a directory's entries by name; directories end with /; .git is hidden."

// ListDirOptions configures the list_dir tool.
type ListDirOptions struct {
	// Fence bounds the directories it lists (see [Fence]).
	Fence Fence
}

// NewListDir returns the list_dir tool, configured by at most one
// ListDirOptions.
func NewListDir(opts ...ListDirOptions) tool.Tool {
	var o ListDirOptions
	if len(opts) > 0 {
		o = opts[0]
	}
	return tool.DefineStatic("list_dir", listDesc, metaRead, listSchema, func(ctx context.Context, call tool.Call, in listIn) (tool.Result, error) {
		return runListDir(ctx, call, in, o.Fence)
	})
}

func runListDir(ctx context.Context, call tool.Call, in listIn, fence Fence) (tool.Result, error) {
	shown := in.Path
	if shown == "" {
		shown = "."
	}
	abs := resolvePath(call, in.Path)
	if r := fence.refuse(abs); r != nil {
		return *r, nil
	}
	info, err := os.Stat(abs)
	if err != nil {
		return statError(shown, abs, err), nil
	}
	if !info.IsDir() {
		return tool.Errorf("%s is a file, not a directory; use read_file to read it", shown), nil
	}
	entries, err := fence.readDir(abs)
	if err != nil && len(entries) == 0 {
		return tool.Errorf("cannot list %s: %v", shown, err), nil
	}
	var b strings.Builder
	n := 0
	for _, e := range entries {
		if e.Name() == ".git" {
			continue
		}
		if n >= listMaxEntries {
			n++
			continue
		}
		b.WriteString(e.Name())
		if isDirEntry(abs, e, fence) {
			b.WriteByte('/')
		}
		b.WriteByte('\n')
		n++
	}
	switch {
	case n == 0:
		b.WriteString("(empty directory)\n")
	case n > listMaxEntries:
		fmt.Fprintf(&b, "… %d more entries not shown (%d in all); use glob to narrow down\n", n-listMaxEntries, n)
	}
	res := tool.Text(b.String())
	res.Metadata = map[string]any{"path": abs, "entries": n}
	return res, nil
}

// isDirEntry says whether e, an entry of dir, is a directory or a symbolic
// link to one the fence lets through (of a link leading out, not even that
// is told).
func isDirEntry(dir string, e fs.DirEntry, fence Fence) bool {
	if e.IsDir() {
		return true
	}
	if e.Type()&fs.ModeSymlink == 0 {
		return false
	}
	p := filepath.Join(dir, e.Name())
	if fence.Check(p) != nil {
		return false
	}
	info, err := os.Stat(p)
	return err == nil && info.IsDir()
}
