package runner

import (
	"context"
	"io/fs"
	"log/slog"
	"path/filepath"
	"unicode/utf8"

	"github.com/reinhq/rein/exec"
	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/tool/builtin"
)

// FileAccess is another holder of a session's text files than the disk:
// an editor's buffers, which may hold changes not saved yet (the ACP
// front's fs delegation, SPEC FRONT-1). The file tools (read_file,
// write_file, edit_file, multi_edit) read a file's text from it and tell
// it what they wrote; everything else of rein's checks stays: the
// permission policy decides the call first, the fences and the sandbox
// judge the path on disk, and only paths inside the session's workspace
// (links resolved) ever reach it.
type FileAccess interface {
	// ReadTextFile returns the text of path (absolute) as the holder has
	// it; ok is false when it has none to give, and the disk's stands.
	ReadTextFile(ctx context.Context, path string) (text string, ok bool, err error)
	// WriteTextFile gives the holder path's new text, which rein has
	// just written on disk.
	WriteTextFile(ctx context.Context, path, text string) error
}

// UseFiles makes fa the holder of the session's text files for the tools
// built when the session binds; call it before [Conversation.Create] or
// [Conversation.Resume]. A server's runs (Config.Tenancy) ignore it: their
// fence reads through opened descriptors, which no editor holds.
func (c *Conversation) UseFiles(fa FileAccess) { c.files = fa }

// heldFiles is a backend whose text reads and writes also go to a
// FileAccess. The backend beneath decides first — it is the sandbox, with
// its hidden files and read-only places — so a path it refuses never
// reaches the holder; a path outside root (as written or through a link)
// never does either.
type heldFiles struct {
	exec.Backend
	fa     FileAccess
	inside builtin.Fence
	logger *slog.Logger
}

// withFiles returns b with its text files held by fa (b itself without).
func withFiles(b exec.Backend, fa FileAccess, root string, logger *slog.Logger) exec.Backend {
	if fa == nil {
		return b
	}
	return heldFiles{Backend: b, fa: fa, inside: builtin.Fence{Root: root}, logger: logger}
}

// ReadFile implements exec.Backend: the disk's content, once the backend
// lets it be read, replaced by the holder's text of a text file inside
// the workspace. Images and binary files stay the disk's: the holder
// deals in text.
func (h heldFiles) ReadFile(ctx context.Context, path string) ([]byte, error) {
	data, err := h.Backend.ReadFile(ctx, path)
	if err != nil || !h.holds(path, data) {
		return data, err
	}
	text, ok, err := h.fa.ReadTextFile(ctx, filepath.Clean(path))
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		h.logger.Warn("the editor did not give the file; rein reads it from disk", "path", path, "err", err)
		return data, nil
	}
	if !ok {
		return data, nil
	}
	return []byte(text), nil
}

// WriteFile implements exec.Backend: the backend writes (or refuses),
// then the holder gets the text of a file inside the workspace.
func (h heldFiles) WriteFile(ctx context.Context, path string, data []byte, perm fs.FileMode) error {
	if err := h.Backend.WriteFile(ctx, path, data, perm); err != nil {
		return err
	}
	if !h.holds(path, data) {
		return nil
	}
	if err := h.fa.WriteTextFile(ctx, filepath.Clean(path), string(data)); err != nil {
		h.logger.Warn("the file is written on disk, but the editor did not take it", "path", path, "err", err)
	}
	return nil
}

// holds reports whether the holder deals with path and content: text
// (UTF-8, not an image) inside the workspace, links resolved.
func (h heldFiles) holds(path string, data []byte) bool {
	if !utf8.Valid(data) || llm.SniffImage(data) != "" {
		return false
	}
	return filepath.IsAbs(path) && h.inside.Check(filepath.Clean(path)) == nil
}
