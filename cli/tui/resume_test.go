package tui

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/reinhq/rein/llm"
)

// resumeBackend is a fakeBackend with a conversation and sessions.
type resumeBackend struct {
	fakeBackend
	history  []llm.Message
	sessions []SessionInfo
	convs    map[string][]llm.Message
}

func (r *resumeBackend) Transcript() []llm.Message {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.history
}

func (r *resumeBackend) SessionList(context.Context) ([]SessionInfo, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]SessionInfo(nil), r.sessions...), nil
}

func (r *resumeBackend) SessionPreview(_ context.Context, id string) ([]llm.Message, error) {
	c, ok := r.convs[id]
	if !ok {
		return nil, errors.New("session " + id + " is gone")
	}
	return c, nil
}

// Command switches the conversation on /resume ID, as the engine does.
func (r *resumeBackend) Command(ctx context.Context, name, args string) (string, error) {
	out, err := r.fakeBackend.Command(ctx, name, args)
	if name == "resume" && args != "" {
		r.mu.Lock()
		r.history, r.info.SessionID = r.convs[args], args
		r.mu.Unlock()
		return "Resumed session " + args + ".", nil
	}
	return out, err
}

func conversation(prompt, answer string) []llm.Message {
	return []llm.Message{
		llm.UserText(prompt),
		{Role: llm.RoleAssistant, Content: []llm.Block{&llm.Text{Text: "Looking."}, &llm.ToolUse{ID: "t1", Name: "bash", Input: []byte(`{"command":"ls"}`)}}},
		{Role: llm.RoleUser, Content: []llm.Block{&llm.ToolResult{ToolUseID: "t1", Content: []llm.Block{&llm.Text{Text: "a.go\nb.go"}}}}},
		{Role: llm.RoleAssistant, Content: []llm.Block{&llm.Text{Text: answer}, &llm.ToolUse{ID: "t2", Name: "read_file", Input: []byte(`{"path":"x"}`)}}},
	}
}

// CLI-6, SESS-3: a session that starts on a resumed conversation prints it
// (prompts, text, tool calls with their results; a call without a result
// shows as interrupted) before anything else.
func TestTranscriptOnStart_CLI6(t *testing.T) {
	b := &resumeBackend{history: conversation("what is here?", "Two **Go** files.")}
	h := newHarness(t, b)
	h.printedHas("── the conversation so far: 4 messages ──", "> what is here?", "Looking.", "✓ bash(ls)", "⎿  a.go",
		"Two Go files.", "✗ read_file(x) · interrupted", "── end of the earlier conversation ──")
	if sb := h.scrollback(); strings.Index(sb, "✻ rein") > strings.Index(sb, "what is here?") {
		t.Errorf("the transcript came before the header:\n%s", sb)
	}
}

// CLI-6, SESS-3: /resume opens the picker: typing searches, Tab previews
// the chosen session, Enter resumes it and its conversation is printed;
// Esc closes; the current session is not resumed again.
func TestResumePicker_CLI6(t *testing.T) {
	now := time.Now()
	b := &resumeBackend{
		sessions: []SessionInfo{
			{ID: "s2", Preview: "fix the flaky test", Updated: now.Add(-time.Minute * 5)},
			{ID: "s1", Preview: "add a cache to the index", Updated: now.Add(-time.Hour * 3), CostUSD: 0.25},
			{ID: "s0", Title: "Old title", Preview: "something", Updated: now.Add(-time.Hour * 72)},
		},
		convs: map[string][]llm.Message{"s1": conversation("add a cache to the index", "Cache added.")},
	}
	b.info.SessionID = "s2"
	h := newHarness(t, b)
	h.submit("/resume")
	h.viewHas("Resume a session", "› fix the flaky test", "5m ago · current · s2", "add a cache to the index", "3h ago · $0.2500 · s1", "Old title", "3d ago")
	h.typeText("cache")
	h.viewHas("› add a cache to the index")
	if strings.Contains(h.view(), "flaky") {
		t.Errorf("the search kept a session that does not match:\n%s", h.view())
	}
	h.send(keyTab)
	h.viewHas("│ > add a cache to the index", "│   Cache added.")
	h.send(keyEnter)
	h.idle()
	h.printedHas("Resumed session s1.", "── the conversation so far: 4 messages ──", "Cache added.")
	if h.m.picker != nil {
		t.Error("the picker stayed open")
	}
	// Esc closes; Enter on the current session resumes nothing.
	h.submit("/resume")
	h.viewHas("Resume a session")
	h.send(keyEsc)
	if h.m.picker != nil || !strings.Contains(h.view(), "Type a message") {
		t.Errorf("Esc did not close the picker:\n%s", h.view())
	}
	h.submit("/resume")
	h.typeText("cache")
	h.viewHas("› add a cache to the index")
	h.send(keyEnter)
	h.viewHas("That is the session you are in.")
	// A session that cannot be loaded says so in the preview.
	b.mu.Lock()
	b.sessions = append(b.sessions, SessionInfo{ID: "gone", Preview: "vanished"})
	b.mu.Unlock()
	h.submit("/resume")
	h.typeText("vanished")
	h.viewHas("› vanished")
	h.send(keyTab)
	h.viewHas("✗ session gone is gone")
}
