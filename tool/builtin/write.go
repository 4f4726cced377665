package builtin

import (
	"context"
	"errors"
	"fmt"
	"io/fs"

	"github.com/reinhq/rein/exec"
	"github.com/reinhq/rein/tool"
)

var writeSchema = tool.NewStaticSchema[writeIn](nil)

type writeIn struct {
	Path    string `json:"path"`
	Content string `json:"content" jsonschema:"the whole new content"`
}

const writeDesc = "Creates or overwrites a file, making parent directories. An existing file must be read first; " +
	"to change part of one, use edit_file."

// NewWriteFile returns the write_file tool. It refuses to overwrite a file
// the session has not read, or that changed since (SPEC TOOL-6).
func NewWriteFile(b exec.Backend, t *FileTracker) tool.Tool {
	b = fenced(b, Fence{})
	w := &fileWriter{b: b, t: t}
	return tool.DefineStatic("write_file", writeDesc, metaEdit, writeSchema, w.run)
}

type fileWriter struct {
	b exec.Backend
	t *FileTracker
}

func (w *fileWriter) run(ctx context.Context, call tool.Call, in writeIn) (tool.Result, error) {
	if in.Path == "" {
		return tool.Errorf("path is empty: give the file to write"), nil
	}
	abs := resolvePath(call, in.Path)
	perm := fs.FileMode(0o644)
	created := false
	var old []byte
	info, err := w.b.Stat(ctx, abs)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		created = true
	case err != nil:
		return tool.Errorf("cannot access %s: %v", in.Path, err), nil
	case info.IsDir():
		return tool.Errorf("%s is a directory; give a file path", in.Path), nil
	default:
		perm = info.Mode().Perm()
		if old, err = w.b.ReadFile(ctx, abs); err != nil {
			return tool.Errorf("cannot read %s: %v", in.Path, err), nil
		}
		if res, ok := refuseUnread(w.t, in.Path, abs, old); !ok {
			return res, nil
		}
	}
	data := []byte(in.Content)
	if err := w.b.WriteFile(ctx, abs, data, perm); err != nil {
		return tool.Errorf("cannot write %s: %v", in.Path, err), nil
	}
	recordWrite(ctx, w.b, w.t, abs, data)
	verb := "Overwrote"
	if created {
		verb = "Created"
	}
	note := ""
	if !created && string(old) == in.Content {
		note = "; the content is unchanged"
	}
	res := tool.Text(fmt.Sprintf("%s %s (%s, %s)%s.", verb, in.Path, plural(countLines(in.Content), "line"),
		sizeText(int64(len(data))), note))
	res.Metadata = map[string]any{"path": abs, "changed": abs, "created": created, "bytes": len(data)}
	return res, nil
}

// refuseUnread checks the read-before-edit rule for an existing file whose
// current content is cur. ok is false, with the result to return, when the
// session did not read the file or it changed since.
func refuseUnread(t *FileTracker, shown, abs string, cur []byte) (tool.Result, bool) {
	err := t.Check(abs, cur)
	switch {
	case err == nil:
		return tool.Result{}, true
	case errors.Is(err, ErrNotRead):
		return tool.Errorf("%s exists and was not read in this session; call read_file on it first, then retry", shown), false
	default:
		return tool.Errorf("%s changed on disk since you last read it; call read_file again to see its current content, then retry", shown), false
	}
}

// recordWrite notes a successful write in the tracker, with the file's new
// modification time when the backend reports it.
func recordWrite(ctx context.Context, b exec.Backend, t *FileTracker, abs string, data []byte) {
	info, err := b.Stat(ctx, abs)
	if err != nil {
		info = nil
	}
	t.RecordWrite(abs, info, data)
}
