package acp

import (
	"context"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/reinhq/rein/runner"
)

// editorFiles is the client's hold on a session's text files (SPEC
// FRONT-1): when the client offers fs/read_text_file, the file tools read
// a file's text as its editor has it, unsaved changes included; when it
// offers fs/write_text_file, what they write reaches its buffer (and its
// undo) too. runner decides what may reach it: only text files inside the
// session's workspace that rein's policy, fence and sandbox let through.
type editorFiles struct {
	conn      *sdk.AgentSideConnection
	sessionID string
	fs        sdk.FileSystemCapabilities
}

var _ runner.FileAccess = (*editorFiles)(nil)

// useEditorFiles gives conv the client's hold on its files, by what the
// client offered (nothing when it offered neither). id is the session's
// id, "" for a new session not created yet: set it once it is.
func (a *acpAgent) useEditorFiles(conv *runner.Conversation, id string) *editorFiles {
	a.mu.Lock()
	fs := a.client.Fs
	a.mu.Unlock()
	if !fs.ReadTextFile && !fs.WriteTextFile {
		return nil
	}
	e := &editorFiles{conn: a.conn, sessionID: id, fs: fs}
	conv.UseFiles(e)
	return e
}

// ReadTextFile implements runner.FileAccess through fs/read_text_file.
func (e *editorFiles) ReadTextFile(ctx context.Context, path string) (string, bool, error) {
	if !e.fs.ReadTextFile {
		return "", false, nil
	}
	resp, err := e.conn.ReadTextFile(ctx, sdk.ReadTextFileRequest{SessionId: sdk.SessionId(e.sessionID), Path: path})
	if err != nil {
		return "", false, err
	}
	return resp.Content, true, nil
}

// WriteTextFile implements runner.FileAccess through fs/write_text_file.
// Empty content is not sent: the protocol requires some (the file is
// emptied on disk, and the editor sees that).
func (e *editorFiles) WriteTextFile(ctx context.Context, path, text string) error {
	if !e.fs.WriteTextFile || text == "" {
		return nil
	}
	_, err := e.conn.WriteTextFile(ctx, sdk.WriteTextFileRequest{SessionId: sdk.SessionId(e.sessionID), Path: path, Content: text})
	return err
}
