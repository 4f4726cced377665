package acp_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/llm/llmtest"
)

// resultOf is the text of the tool result of call id the model was sent,
// "" when none was.
func resultOf(e *env, id string) string {
	for _, r := range e.model.Requests() {
		for _, m := range r.Messages {
			for _, b := range m.Content {
				if tr, ok := b.(*llm.ToolResult); ok && tr.ToolUseID == id {
					return llm.Message{Content: tr.Content}.TextOf()
				}
			}
		}
	}
	return ""
}

// With a client that offers its files, read_file reads the editor's
// buffer — changes not saved yet included — and an edit is made on that
// text, written on disk and given to the editor (SPEC FRONT-1; TOOL-6's
// read-before-edit holds on the editor's text).
func TestEditorFilesRoundTrip_FRONT1(t *testing.T) {
	e := newEnv(t,
		llmtest.Reply{ToolCalls: []llm.ToolUse{llmtest.Call("r1", "read_file", `{"path":"notes.txt"}`)}},
		llmtest.Reply{ToolCalls: []llm.ToolUse{llmtest.Call("e1", "edit_file", `{"path":"notes.txt","old_string":"Tuesday","new_string":"Wednesday"}`)}},
		llmtest.Reply{Text: "Moved."},
	)
	notes := filepath.Join(e.work, "notes.txt")
	os.WriteFile(notes, []byte("ship on Friday\n"), 0o600)
	conn, cl := e.connectFS(map[string]string{notes: "ship on Tuesday (not saved)\n"})
	id := e.newSession(conn)
	cl.answer = pick("once")
	if r := prompt(t, conn, id, "Move the ship date to Wednesday."); r.StopReason != sdk.StopReasonEndTurn {
		t.Fatalf("stop = %s", r.StopReason)
	}
	if got := resultOf(e, "r1"); !strings.Contains(got, "ship on Tuesday (not saved)") || strings.Contains(got, "Friday") {
		t.Errorf("the model read %q, not the editor's buffer", got)
	}
	if got := resultOf(e, "e1"); strings.Contains(got, "read_file") || strings.Contains(got, "changed") {
		t.Errorf("the edit was refused: %q", got)
	}
	want := "ship on Wednesday (not saved)\n"
	if b, _ := cl.buffer(notes); b != want {
		t.Errorf("editor buffer = %q, want %q", b, want)
	}
	if disk, _ := os.ReadFile(notes); string(disk) != want {
		t.Errorf("disk = %q, want %q", disk, want)
	}
	calls := cl.calls()
	if !slices.Contains(calls, "read "+notes) || !slices.Contains(calls, "write "+notes) {
		t.Errorf("fs calls = %v", calls)
	}
}

// Without fs in the client's capabilities, nothing is asked of it: the
// file tools use the disk (an editor that says nothing is not sent
// fs/read_text_file, which it would answer with an error).
func TestEditorFilesNotOffered_FRONT1(t *testing.T) {
	e := newEnv(t,
		llmtest.Reply{ToolCalls: []llm.ToolUse{llmtest.Call("r1", "read_file", `{"path":"notes.txt"}`)}},
		llmtest.Reply{Text: "ok"},
	)
	os.WriteFile(filepath.Join(e.work, "notes.txt"), []byte("on disk\n"), 0o600)
	conn, _ := e.connect()
	prompt(t, conn, e.newSession(conn), "read")
	if got := resultOf(e, "r1"); !strings.Contains(got, "on disk") {
		t.Errorf("read = %q", got)
	}
}

// Attack rows (FRONT-1, PERM-2): a path outside the workspace never
// reaches the editor, in bypass mode too, whether it is written outright
// or reached through a link in the workspace; the editor's buffer of an
// outside file is never what the model sees. rein's own data
// (.rein/data) and sensitive files are refused before any editor call.
func TestAttackEditorFilesOutside_FRONT1(t *testing.T) {
	e := newEnv(t)
	outside := filepath.Join(filepath.Dir(e.work), "outside")
	os.MkdirAll(outside, 0o700)
	secret := filepath.Join(outside, "secret.txt")
	os.WriteFile(secret, []byte("disk secret\n"), 0o600)
	if err := os.Symlink(outside, filepath.Join(e.work, "link")); err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Join(e.work, ".rein", "data"), 0o700)
	os.WriteFile(filepath.Join(e.work, ".rein", "data", "kb.txt"), []byte("rein data\n"), 0o600)
	os.WriteFile(filepath.Join(e.work, ".env"), []byte("KEY=1\n"), 0o600)
	buffers := map[string]string{
		secret: "EDITOR-SECRET outside\n",
		filepath.Join(e.work, "link", "secret.txt"):      "EDITOR-SECRET via link\n",
		filepath.Join(e.work, ".rein", "data", "kb.txt"): "EDITOR-SECRET rein data\n",
		filepath.Join(e.work, ".env"):                    "EDITOR-SECRET env\n",
	}
	rows := []struct {
		name, tool, input string
	}{
		{"absolute path outside", "read_file", `{"path":"` + secret + `"}`},
		{"relative path with ..", "read_file", `{"path":"../outside/secret.txt"}`},
		{"link in the workspace to outside", "read_file", `{"path":"link/secret.txt"}`},
		{"write outside", "write_file", `{"path":"` + filepath.Join(outside, "new.txt") + `","content":"x"}`},
		{"write through the link", "write_file", `{"path":"link/new2.txt","content":"y"}`},
		{"rein's own data", "read_file", `{"path":".rein/data/kb.txt"}`},
		{"a sensitive file", "read_file", `{"path":".env"}`},
	}
	var replies []llmtest.Reply
	for i, r := range rows {
		replies = append(replies, llmtest.Reply{ToolCalls: []llm.ToolUse{llmtest.Call("a"+string(rune('0'+i)), r.tool, r.input)}})
	}
	e.model = llmtest.NewScripted(append(replies, llmtest.Reply{Text: "done"})...)
	conn, cl := e.connectFS(buffers)
	id := e.newSession(conn)
	if _, err := conn.SetSessionMode(context.Background(), sdk.SetSessionModeRequest{SessionId: id, ModeId: "bypass"}); err != nil {
		t.Fatal(err)
	}
	prompt(t, conn, id, "go")
	for _, c := range cl.calls() {
		if !strings.HasPrefix(strings.SplitN(c, " ", 2)[1], e.work+string(filepath.Separator)) || strings.Contains(c, "/link/") ||
			strings.Contains(c, ".rein/data") || strings.HasSuffix(c, ".env") {
			t.Errorf("the editor was asked %q", c)
		}
	}
	for i, r := range rows {
		if got := resultOf(e, "a"+string(rune('0'+i))); strings.Contains(got, "EDITOR-SECRET") {
			t.Errorf("%s: the model saw the editor's buffer: %q", r.name, got)
		}
	}
}
