package acp_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/llm/llmtest"
)

// initialize answers only what rein built: loading (with replay), images
// and embedded context, list/resume/close, the client's MCP servers over
// stdio, HTTP and SSE; no audio, no ACP-channel MCP.
func TestInitializeCapabilities_FRONT1(t *testing.T) {
	e := newEnv(t)
	conn, _ := e.connect()
	r, err := conn.Initialize(context.Background(), sdk.InitializeRequest{ProtocolVersion: sdk.ProtocolVersionNumber,
		ClientCapabilities: sdk.ClientCapabilities{Fs: sdk.FileSystemCapabilities{ReadTextFile: true, WriteTextFile: true}, Terminal: true}})
	if err != nil {
		t.Fatal(err)
	}
	caps := r.AgentCapabilities
	if r.ProtocolVersion != sdk.ProtocolVersionNumber || r.AgentInfo == nil || r.AgentInfo.Name != "rein" {
		t.Errorf("version/info = %v %+v", r.ProtocolVersion, r.AgentInfo)
	}
	if !caps.LoadSession || !caps.PromptCapabilities.Image || !caps.PromptCapabilities.EmbeddedContext || caps.PromptCapabilities.Audio {
		t.Errorf("capabilities = %+v", caps)
	}
	if !caps.McpCapabilities.Http || !caps.McpCapabilities.Sse || caps.McpCapabilities.Acp {
		t.Errorf("MCP transports advertised: %+v", caps.McpCapabilities)
	}
	sc := caps.SessionCapabilities
	if sc.List == nil || sc.Resume == nil || sc.Close == nil || sc.AdditionalDirectories != nil || sc.Fork != nil {
		t.Errorf("session capabilities = %+v", sc)
	}
}

// A multi-turn task: the model thinks, reads a file (a read tool call with
// its location), answers; the next turn edits it, which asks, and the
// update carries the diff (SPEC FRONT-1, LOOP-1).
func TestPromptStreamsTurns_FRONT1(t *testing.T) {
	e := newEnv(t,
		llmtest.Reply{Thinking: "read the notes first", ToolCalls: []llm.ToolUse{llmtest.Call("c1", "read_file", `{"path":"notes.txt"}`)}},
		llmtest.Reply{Text: "The notes say: ship on Friday."},
		llmtest.Reply{ToolCalls: []llm.ToolUse{llmtest.Call("c2", "edit_file", `{"path":"notes.txt","old_string":"Friday","new_string":"Monday"}`)}},
		llmtest.Reply{Text: "Moved to Monday."},
	)
	notes := filepath.Join(e.work, "notes.txt")
	os.WriteFile(notes, []byte("ship on Friday\n"), 0o600)
	conn, cl := e.connect()
	id := e.newSession(conn)

	r := prompt(t, conn, id, "What do my notes say?")
	if r.StopReason != sdk.StopReasonEndTurn {
		t.Errorf("stop = %s", r.StopReason)
	}
	us := cl.take()
	want := []string{"thought", "usage", "tool_call:read:in_progress", "tool_call_update:completed", "agent", "usage"}
	if got := slices.Compact(kinds(us)); !slices.Equal(got, want) {
		t.Fatalf("updates = %v, want %v", got, want)
	}
	tc := us[slices.IndexFunc(us, func(u sdk.SessionUpdate) bool { return u.ToolCall != nil })].ToolCall
	if len(tc.Locations) != 1 || tc.Locations[0].Path != notes || tc.ToolCallId != "c1" || !strings.Contains(tc.Title, "notes.txt") {
		t.Errorf("tool call = %+v", tc)
	}
	if got := agentText(us); got != "The notes say: ship on Friday." {
		t.Errorf("text = %q", got)
	}

	cl.answer = pick("once")
	if r := prompt(t, conn, id, "Move it to Monday."); r.StopReason != sdk.StopReasonEndTurn {
		t.Errorf("stop = %s", r.StopReason)
	}
	q := cl.questions()
	if len(q) != 1 || q[0].ToolCall.ToolCallId != "c2" || *q[0].ToolCall.Kind != sdk.ToolKindEdit {
		t.Fatalf("questions = %+v", q)
	}
	us = cl.take()
	var diff *sdk.ToolCallContentDiff
	for _, u := range us {
		if u := u.ToolCallUpdate; u != nil && u.Status != nil && *u.Status == sdk.ToolCallStatusCompleted && len(u.Content) == 1 {
			diff = u.Content[0].Diff
		}
	}
	if diff == nil || diff.Path != notes || diff.NewText != "Monday" || diff.OldText == nil || *diff.OldText != "Friday" {
		for _, u := range us {
			if u.ToolCallUpdate != nil {
				t.Logf("update: %+v %+v", *u.ToolCallUpdate.Status, u.ToolCallUpdate.RawOutput)
			}
		}
		t.Fatalf("no diff in %v", kinds(us))
	}
	if b, _ := os.ReadFile(notes); string(b) != "ship on Monday\n" {
		t.Errorf("notes = %q", b)
	}
}

// Permission questions round trip (SPEC PERM-3): once runs the call and
// asks again next time; always keeps a rule, so the same call runs
// unasked after; reject refuses it and the file is not written.
func TestPermissionRoundTrip_PERM3(t *testing.T) {
	write := func(id, name string) llmtest.Reply {
		return llmtest.Reply{ToolCalls: []llm.ToolUse{llmtest.Call(id, "bash", `{"command":"echo hi > `+name+`"}`)}}
	}
	for _, tc := range []struct {
		answer     string
		ran        bool
		askedAgain bool
	}{
		{"once", true, true},
		{"always", true, false},
		{"deny", false, true},
	} {
		t.Run(tc.answer, func(t *testing.T) {
			e := newEnv(t, write("a1", "one.txt"), llmtest.Reply{Text: "ok"}, write("a2", "one.txt"), llmtest.Reply{Text: "ok"})
			conn, cl := e.connect()
			id := e.newSession(conn)
			cl.answer = pick(tc.answer)
			prompt(t, conn, id, "write it")
			q := cl.questions()
			if len(q) != 1 {
				t.Fatalf("asked %d times", len(q))
			}
			var ids []string
			for _, o := range q[0].Options {
				ids = append(ids, string(o.OptionId)+":"+string(o.Kind))
			}
			if !slices.Equal(ids, []string{"once:allow_once", "always:allow_always", "deny:reject_once"}) {
				t.Errorf("options = %v", ids)
			}
			_, err := os.Stat(filepath.Join(e.work, "one.txt"))
			if ran := err == nil; ran != tc.ran {
				t.Errorf("ran = %v, want %v", ran, tc.ran)
			}
			if !tc.ran && !slices.Contains(kinds(cl.take()), "tool_call_update:failed") {
				t.Errorf("a refused call is not failed")
			}
			prompt(t, conn, id, "again")
			if again := len(cl.questions()) > 0; again != tc.askedAgain {
				t.Errorf("asked again = %v, want %v", again, tc.askedAgain)
			}
		})
	}
}

// session/cancel in the middle of a command stops it; the prompt answers
// cancelled after the tool's failed update.
func TestCancelMidTool_FRONT1(t *testing.T) {
	e := newEnv(t, llmtest.Reply{ToolCalls: []llm.ToolUse{llmtest.Call("s1", "bash", `{"command":"sleep 60"}`)}}, llmtest.Reply{Text: "never"})
	conn, cl := e.connect()
	id := e.newSession(conn)
	if _, err := conn.SetSessionMode(context.Background(), sdk.SetSessionModeRequest{SessionId: id, ModeId: "bypass"}); err != nil {
		t.Fatal(err)
	}
	cl.onUpdate = func(u sdk.SessionUpdate) {
		if u.ToolCall != nil {
			go conn.Cancel(context.Background(), sdk.CancelNotification{SessionId: id})
		}
	}
	r := prompt(t, conn, id, "wait a minute")
	if r.StopReason != sdk.StopReasonCancelled {
		t.Errorf("stop = %s", r.StopReason)
	}
	got := kinds(cl.take())
	if !slices.Contains(got, "tool_call_update:failed") || slices.Contains(got, "agent") {
		t.Errorf("updates = %v", got)
	}
	// The session takes the next prompt.
	cl.onUpdate = nil
	e.model.Push(llmtest.Reply{Text: "back"})
	if r := prompt(t, conn, id, "hello"); r.StopReason != sdk.StopReasonEndTurn {
		t.Errorf("after cancel: stop = %s", r.StopReason)
	}
}

// set_mode plan: a write is refused without a question; an unknown mode
// is an error naming the modes (SPEC PERM-1).
func TestSetModePlan_PERM1(t *testing.T) {
	e := newEnv(t, llmtest.Reply{ToolCalls: []llm.ToolUse{llmtest.Call("w1", "write_file", `{"path":"new.txt","content":"x"}`)}}, llmtest.Reply{Text: "cannot"})
	conn, cl := e.connect()
	r, err := conn.NewSession(context.Background(), sdk.NewSessionRequest{Cwd: e.work, McpServers: []sdk.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	if r.Modes == nil || r.Modes.CurrentModeId != "default" || len(r.Modes.AvailableModes) < 5 {
		t.Fatalf("modes = %+v", r.Modes)
	}
	if _, err := conn.SetSessionMode(context.Background(), sdk.SetSessionModeRequest{SessionId: r.SessionId, ModeId: "yolo"}); err == nil || !strings.Contains(err.Error(), "accept-edits") {
		t.Errorf("unknown mode: %v", err)
	}
	if _, err := conn.SetSessionMode(context.Background(), sdk.SetSessionModeRequest{SessionId: r.SessionId, ModeId: "plan"}); err != nil {
		t.Fatal(err)
	}
	cl.answer = pick("once")
	prompt(t, conn, r.SessionId, "write new.txt")
	if q := cl.questions(); len(q) != 0 {
		t.Errorf("plan mode asked: %+v", q)
	}
	if _, err := os.Stat(filepath.Join(e.work, "new.txt")); err == nil {
		t.Error("plan mode wrote the file")
	}
	if got := kinds(cl.take()); !slices.Contains(got, "tool_call_update:failed") {
		t.Errorf("updates = %v", got)
	}
}

// session/load replays the whole conversation before it answers; list
// shows the session; resume binds without replay (SPEC SESS-3).
func TestLoadReplaysHistory_SESS3(t *testing.T) {
	e := newEnv(t,
		llmtest.Reply{Thinking: "look", ToolCalls: []llm.ToolUse{llmtest.Call("c1", "todo_write", `{"todos":[{"content":"read notes","status":"in_progress"}]}`)}},
		llmtest.Reply{Text: "First answer."},
		llmtest.Reply{Text: "Second answer."},
	)
	conn, _ := e.connect()
	id := e.newSession(conn)
	prompt(t, conn, id, "first question")
	prompt(t, conn, id, "second question")
	if _, err := conn.CloseSession(context.Background(), sdk.CloseSessionRequest{SessionId: id}); err != nil {
		t.Fatal(err)
	}

	conn2, cl2 := e.connect()
	list, err := conn2.ListSessions(context.Background(), sdk.ListSessionsRequest{Cwd: &e.work})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Sessions) != 1 || list.Sessions[0].SessionId != id || list.Sessions[0].Cwd != e.work {
		t.Fatalf("list = %+v", list.Sessions)
	}
	if _, err := conn2.LoadSession(context.Background(), sdk.LoadSessionRequest{SessionId: id, Cwd: e.work, McpServers: []sdk.McpServer{}}); err != nil {
		t.Fatal(err)
	}
	us := cl2.take()
	want := []string{"user", "thought", "tool_call:think:in_progress", "tool_call_update:completed", "plan", "agent", "user", "agent"}
	if got := kinds(us); !slices.Equal(got, want) {
		t.Fatalf("replay = %v, want %v", got, want)
	}
	if got := agentText(us); got != "First answer.Second answer." {
		t.Errorf("replayed text = %q", got)
	}
	// The loaded session goes on.
	e.model.Push(llmtest.Reply{Text: "Third."})
	if r := prompt(t, conn2, id, "third"); r.StopReason != sdk.StopReasonEndTurn {
		t.Errorf("stop = %s", r.StopReason)
	}
	if n := len(e.model.Requests()); n != 4 {
		t.Fatalf("requests = %d", n)
	}
	// Once closed here, another connection resumes it without a replay.
	if _, err := conn2.CloseSession(context.Background(), sdk.CloseSessionRequest{SessionId: id}); err != nil {
		t.Fatal(err)
	}
	conn3, cl3 := e.connect()
	if _, err := conn3.ResumeSession(context.Background(), sdk.ResumeSessionRequest{SessionId: id, Cwd: e.work}); err != nil {
		t.Fatal(err)
	}
	if us := cl3.take(); len(us) != 0 {
		t.Errorf("resume replayed %v", kinds(us))
	}
	if _, err := conn3.CloseSession(context.Background(), sdk.CloseSessionRequest{SessionId: "nope"}); err == nil {
		t.Error("closing a session not open: no error")
	}
	msgs := e.model.Requests()[3].Messages
	if len(msgs) != 7 || msgs[0].TextOf() != "first question" || !strings.HasPrefix(msgs[6].TextOf(), "third") {
		for _, m := range msgs {
			t.Logf("%s: %q", m.Role, m.TextOf())
		}
		t.Errorf("the loaded session's request has %d messages", len(msgs))
	}
}

// session/cancel while a permission question is open: the client answers
// the question cancelled, as the protocol asks; the command does not run
// and the prompt answers cancelled (SPEC PERM-3).
func TestCancelWhileAsking_PERM3(t *testing.T) {
	e := newEnv(t, llmtest.Reply{ToolCalls: []llm.ToolUse{llmtest.Call("b1", "bash", `{"command":"echo ran > ran.txt"}`)}}, llmtest.Reply{Text: "never"})
	conn, cl := e.connect()
	id := e.newSession(conn)
	cl.answer = func(sdk.RequestPermissionRequest) sdk.RequestPermissionResponse {
		if err := conn.Cancel(context.Background(), sdk.CancelNotification{SessionId: id}); err != nil {
			t.Error(err)
		}
		return sdk.RequestPermissionResponse{Outcome: sdk.NewRequestPermissionOutcomeCancelled()}
	}
	if r := prompt(t, conn, id, "run it"); r.StopReason != sdk.StopReasonCancelled {
		t.Errorf("stop = %s", r.StopReason)
	}
	if _, err := os.Stat(filepath.Join(e.work, "ran.txt")); err == nil {
		t.Error("the command ran")
	}
	if n := len(cl.questions()); n != 1 {
		t.Errorf("asked %d times", n)
	}
}

// A prompt of text, an image and an embedded resource reaches the model
// as one user message: the text and the resource's text fenced with its
// uri, then the image (SPEC LOOP-1, LOOP-2); load replays the image.
func TestPromptImageAndResource_LOOP2(t *testing.T) {
	e := newEnv(t, llmtest.Reply{Text: "a picture"})
	conn, _ := e.connect()
	id := e.newSession(conn)
	png := append([]byte("\x89PNG\r\n\x1a\n"), make([]byte, 64)...)
	_, err := conn.Prompt(context.Background(), sdk.PromptRequest{SessionId: id, Prompt: []sdk.ContentBlock{
		sdk.TextBlock("what is this?"),
		sdk.ImageBlock(base64.StdEncoding.EncodeToString(png), "image/png"),
		sdk.ResourceBlock(sdk.EmbeddedResourceResource{TextResourceContents: &sdk.TextResourceContents{Uri: "file:///w/a.go", Text: "package a"}}),
	}})
	if err != nil {
		t.Fatal(err)
	}
	m := e.model.Requests()[0].Messages[0]
	var img *llm.Image
	for _, b := range m.Content {
		if i, ok := b.(*llm.Image); ok {
			img = i
		}
	}
	if img == nil || !bytes.Equal(img.Data, png) || img.MediaType != "image/png" {
		t.Errorf("image = %+v", img)
	}
	if txt := m.TextOf(); !strings.HasPrefix(txt, "what is this?\n<resource uri=\"file:///w/a.go\">\npackage a\n</resource>") {
		t.Errorf("text = %q", txt)
	}
	if _, err := conn.CloseSession(context.Background(), sdk.CloseSessionRequest{SessionId: id}); err != nil {
		t.Fatal(err)
	}
	conn2, cl2 := e.connect()
	if _, err := conn2.LoadSession(context.Background(), sdk.LoadSessionRequest{SessionId: id, Cwd: e.work, McpServers: []sdk.McpServer{}}); err != nil {
		t.Fatal(err)
	}
	var replayed bool
	for _, u := range cl2.take() {
		if c := u.UserMessageChunk; c != nil && c.Content.Image != nil && c.Content.Image.Data == base64.StdEncoding.EncodeToString(png) {
			replayed = true
		}
	}
	if !replayed {
		t.Error("load did not replay the image")
	}
}

// Each model call's use of the context goes to the client as a
// usage_update: the tokens of its prompt and answer against the model's
// window (SPEC FRONT-1, SESS-4); the prompt's answer carries the run's
// tokens.
func TestUsageUpdates_FRONT1(t *testing.T) {
	e := newEnv(t,
		llmtest.Reply{ToolCalls: []llm.ToolUse{llmtest.Call("c1", "list_dir", `{}`)},
			Usage: llm.Usage{InputTokens: 1000, CacheReadTokens: 500, OutputTokens: 20}},
		llmtest.Reply{Text: "ok", Usage: llm.Usage{InputTokens: 1100, CacheReadTokens: 500, OutputTokens: 5}},
	)
	conn, cl := e.connect()
	r := prompt(t, conn, e.newSession(conn), "list")
	var used []int
	for _, u := range cl.take() {
		if uu := u.UsageUpdate; uu != nil {
			if uu.Size != 100_000 {
				t.Errorf("size = %d", uu.Size)
			}
			used = append(used, uu.Used)
		}
	}
	if !slices.Equal(used, []int{1520, 1605}) {
		t.Errorf("used = %v, want [1520 1605]", used)
	}
	if r.Usage == nil || r.Usage.InputTokens != 3100 || r.Usage.OutputTokens != 25 {
		t.Errorf("answer usage = %+v", r.Usage)
	}
}

// The session's model is a config option (FRONT-1): session/new offers the
// current model and rein's aliases; choosing one switches the next
// prompts' model; a value not offered, another option id or a boolean is
// refused, saying what is offered.
func TestConfigOptionModel_FRONT1(t *testing.T) {
	e := newEnv(t, llmtest.Reply{Text: "ok"})
	conn, _ := e.connect()
	ctx := context.Background()
	r, err := conn.NewSession(ctx, sdk.NewSessionRequest{Cwd: e.work, McpServers: []sdk.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.ConfigOptions) != 1 || r.ConfigOptions[0].Select == nil {
		t.Fatalf("config options = %+v", r.ConfigOptions)
	}
	sel := r.ConfigOptions[0].Select
	var values []string
	for _, o := range *sel.Options.Ungrouped {
		values = append(values, string(o.Value))
	}
	if sel.Id != "model" || sel.CurrentValue != "scripted/demo" || values[0] != "scripted/demo" || !slices.Contains(values, "sonnet") {
		t.Fatalf("model option = %+v, values %v", sel, values)
	}
	set := func(id, value string) (sdk.SetSessionConfigOptionResponse, error) {
		return conn.SetSessionConfigOption(ctx, sdk.SetSessionConfigOptionRequest{ValueId: &sdk.SetSessionConfigOptionValueId{
			SessionId: r.SessionId, ConfigId: sdk.SessionConfigId(id), Value: sdk.SessionConfigValueId(value)}})
	}
	got, err := set("model", "sonnet")
	if err != nil {
		t.Fatal(err)
	}
	if cur := got.ConfigOptions[0].Select.CurrentValue; cur != "sonnet" {
		t.Errorf("current after the switch = %s", cur)
	}
	prompt(t, conn, r.SessionId, "hi")
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"a model not offered", func() error { _, err := set("model", "evil/model"); return err }(), "not one of the choices"},
		{"another option", func() error { _, err := set("temperature", "high"); return err }(), "unknown config option"},
		{"an effort, for a model that takes none", func() error { _, err := set("effort", "high"); return err }(), "takes no reasoning effort"},
		{"a boolean", func() error {
			_, err := conn.SetSessionConfigOption(ctx, sdk.SetSessionConfigOptionRequest{Boolean: &sdk.SetSessionConfigOptionBoolean{
				SessionId: r.SessionId, ConfigId: "model", Type: "boolean", Value: true}})
			return err
		}(), "select"},
		{"a session not open", func() error {
			_, err := conn.SetSessionConfigOption(ctx, sdk.SetSessionConfigOptionRequest{ValueId: &sdk.SetSessionConfigOptionValueId{
				SessionId: "nope", ConfigId: "model", Value: "sonnet"}})
			return err
		}(), "no open session"},
	} {
		if tc.err == nil || !strings.Contains(tc.err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want one saying %q", tc.name, tc.err, tc.want)
		}
	}
}

// The reasoning effort is a config option (FRONT-1) offered only while
// the session's model takes one: session/new offers it at "default" (the
// configuration's thinking); choosing high sends the next request with
// effort high; a value not offered is refused; a switch to a model that
// takes none drops the option, refuses it, and sends no effort.
func TestConfigOptionEffort_FRONT1(t *testing.T) {
	e := newEnv(t, llmtest.Reply{Text: "thought hard"}, llmtest.Reply{Text: "plain"})
	e.reasons = map[string]bool{"scripted/demo": true}
	conn, _ := e.connect()
	ctx := context.Background()
	r, err := conn.NewSession(ctx, sdk.NewSessionRequest{Cwd: e.work, McpServers: []sdk.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	effort := func(opts []sdk.SessionConfigOption) *sdk.SessionConfigOptionSelect {
		for _, o := range opts {
			if o.Select != nil && o.Select.Id == "effort" {
				return o.Select
			}
		}
		return nil
	}
	sel := effort(r.ConfigOptions)
	if sel == nil || sel.CurrentValue != "default" || *sel.Category != sdk.SessionConfigOptionCategoryThoughtLevel {
		t.Fatalf("effort option = %+v", sel)
	}
	var values []string
	for _, o := range *sel.Options.Ungrouped {
		values = append(values, string(o.Value))
	}
	if !slices.Equal(values, []string{"default", "low", "medium", "high"}) {
		t.Errorf("effort values = %v", values)
	}
	set := func(id, value string) (sdk.SetSessionConfigOptionResponse, error) {
		return conn.SetSessionConfigOption(ctx, sdk.SetSessionConfigOptionRequest{ValueId: &sdk.SetSessionConfigOptionValueId{
			SessionId: r.SessionId, ConfigId: sdk.SessionConfigId(id), Value: sdk.SessionConfigValueId(value)}})
	}
	got, err := set("effort", "high")
	if err != nil {
		t.Fatal(err)
	}
	if s := effort(got.ConfigOptions); s == nil || s.CurrentValue != "high" {
		t.Errorf("effort after the switch = %+v", s)
	}
	if _, err := set("effort", "extreme"); err == nil || !strings.Contains(err.Error(), "not one of the choices: default, low, medium, high") {
		t.Errorf("effort extreme: %v", err)
	}
	prompt(t, conn, r.SessionId, "think")
	reqs := e.model.Requests()
	if th := reqs[len(reqs)-1].Thinking; th == nil || th.Effort != "high" || th.BudgetTokens != 0 {
		t.Errorf("the request after effort high asks thinking %+v", th)
	}

	if got, err = set("model", "sonnet"); err != nil {
		t.Fatal(err)
	}
	if s := effort(got.ConfigOptions); s != nil || len(got.ConfigOptions) != 1 {
		t.Errorf("a model that takes no effort still offers it: %+v", got.ConfigOptions)
	}
	if _, err := set("effort", "low"); err == nil || !strings.Contains(err.Error(), "takes no reasoning effort") {
		t.Errorf("effort for a model that takes none: %v", err)
	}
	prompt(t, conn, r.SessionId, "plain")
	reqs = e.model.Requests()
	if th := reqs[len(reqs)-1].Thinking; th != nil {
		t.Errorf("the request of a model that takes no effort asks thinking %+v", th)
	}
}
