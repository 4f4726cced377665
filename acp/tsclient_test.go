package acp_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/llm/llmtest/mockserver"
)

// tsSDKVersion is the official TypeScript client scripts/test installs.
const tsSDKVersion = "2.4.0"

// The official TypeScript ACP client (@agentclientprotocol/sdk) drives
// the built `rein acp` over stdio against a mock vendor on 127.0.0.1: a
// prompt whose command asks permission, the reasoning effort set to high
// and the mode to bypass, a prompt whose long command runs unasked and is
// cancelled while it runs, a third prompt (sent with the effort's budget
// and the cancelled call answered), then, in a second process, the
// list and a load of the session (SPEC FRONT-1, SESS-3, PERM-3); in a
// third, a client offering its files answers read_file's fs/read_text_file
// with a buffer not saved, which is what the model is sent. It
// skips, saying why, without node or the SDK (scripts/test installs it
// into .cache/npm; REIN_TEST_NPM_PREFIX names another npm prefix).
func TestTypeScriptClient_FRONT1(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs node; skipped in short mode")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("environment: node is not installed: the TypeScript client test needs it")
	}
	prefix := os.Getenv("REIN_TEST_NPM_PREFIX")
	if prefix == "" {
		prefix = filepath.Join("..", ".cache", "npm")
	}
	sdkDir, _ := filepath.Abs(filepath.Join(prefix, "node_modules", "@agentclientprotocol", "sdk"))
	pkg, err := os.ReadFile(filepath.Join(sdkDir, "package.json"))
	if err != nil || !strings.Contains(string(pkg), `"version": "`+tsSDKVersion+`"`) {
		t.Skipf("environment: @agentclientprotocol/sdk@%s is not installed at %s: scripts/test installs it (npm install --prefix .cache/npm @agentclientprotocol/sdk@%s)", tsSDKVersion, sdkDir, tsSDKVersion)
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "rein")
	if out, err := exec.Command("go", "build", "-o", bin, "../cmd/rein").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	srv := mockserver.New()
	defer srv.Close()
	srv.APIKey = "test-key"
	srv.Enqueue(
		mockserver.Turn{Text: "Running it.", ToolCalls: []mockserver.ToolCall{{ID: "call_1", Name: "bash", Input: `{"command":"echo hello-from-tool"}`}},
			Usage: llm.Usage{InputTokens: 3000, OutputTokens: 40}},
		mockserver.Turn{Text: "The command printed: hello-from-tool", Usage: llm.Usage{InputTokens: 3100, OutputTokens: 12}},
		mockserver.Turn{ToolCalls: []mockserver.ToolCall{{ID: "call_long", Name: "bash", Input: `{"command":"echo started > started.txt; sleep 60; echo finished > finished.txt"}`}}},
		mockserver.Turn{Text: "Still here."},
		mockserver.Turn{ToolCalls: []mockserver.ToolCall{{ID: "call_2", Name: "read_file", Input: `{"path":"notes.txt"}`}}},
		mockserver.Turn{Text: "It says what the editor holds."},
	)
	home, ws := filepath.Join(dir, "home"), filepath.Join(dir, "ws")
	os.MkdirAll(home, 0o700)
	os.MkdirAll(ws, 0o700)
	os.WriteFile(filepath.Join(ws, "notes.txt"), []byte("saved on disk\n"), 0o600)
	cmd := exec.Command(node, "testdata/tsclient.mjs", sdkDir, bin, ws)
	cmd.Env = []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "REIN_SANDBOX=off", "REIN_MODEL=claude-sonnet-4-5",
		"ANTHROPIC_API_KEY=test-key", "ANTHROPIC_BASE_URL=" + srv.URL}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node: %v\nstderr:\n%s", err, stderr.String())
	}
	var got struct {
		First struct {
			SessionID  string   `json:"sessionId"`
			Modes      []string `json:"modes"`
			Options    []string `json:"options"`
			Effort     []string `json:"effort"`
			Stop       string   `json:"stop"`
			CancelStop string   `json:"cancelStop"`
			AgainStop  string   `json:"againStop"`
			Code       int      `json:"code"`
			Kinds      []string `json:"kinds"`
			Text       string   `json:"text"`
			Asked      [][]string
			Init       struct {
				AgentCapabilities struct {
					LoadSession bool `json:"loadSession"`
				} `json:"agentCapabilities"`
			} `json:"init"`
		} `json:"first"`
		Second struct {
			Listed []string `json:"listed"`
			Kinds  []string `json:"kinds"`
			Text   string   `json:"text"`
			Code   int      `json:"code"`
		} `json:"second"`
		Third struct {
			Stop string   `json:"stop"`
			FS   []string `json:"fs"`
			Code int      `json:"code"`
		} `json:"third"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("%v: %s\nstderr:\n%s", err, out, stderr.String())
	}
	f, s := got.First, got.Second
	if f.Stop != "end_turn" || f.Code != 0 || !f.Init.AgentCapabilities.LoadSession || !slices.Contains(f.Modes, "plan") {
		t.Errorf("first: %+v\nstderr:\n%s", f, stderr.String())
	}
	// One question: the long command ran unasked in bypass mode.
	if len(f.Asked) != 1 || !slices.Equal(f.Asked[0], []string{"allow_once", "allow_always", "reject_once"}) {
		t.Errorf("asked: %v", f.Asked)
	}
	if !slices.Contains(f.Kinds, "tool_call:execute:in_progress") || !slices.Contains(f.Kinds, "tool_call_update::completed") ||
		f.Text != "Running it.The command printed: hello-from-toolStill here." {
		t.Errorf("first updates: %v, text %q", f.Kinds, f.Text)
	}
	// The effort is offered for claude-sonnet-4-5 (it reasons) and set.
	if !slices.Equal(f.Options, []string{"model=anthropic/claude-sonnet-4-5", "effort=default"}) || !slices.Equal(f.Effort, []string{"model=anthropic/claude-sonnet-4-5", "effort=high"}) {
		t.Errorf("config options: %v, after effort high: %v", f.Options, f.Effort)
	}
	if f.CancelStop != "cancelled" || f.AgainStop != "end_turn" {
		t.Errorf("the cancelled prompt stopped %q, the next %q", f.CancelStop, f.AgainStop)
	}
	if _, err := os.Stat(filepath.Join(ws, "started.txt")); err != nil {
		t.Errorf("the cancelled command never started: %v", err)
	}
	if _, err := os.Stat(filepath.Join(ws, "finished.txt")); err == nil {
		t.Error("the cancelled command ran to its end")
	}
	if s.Code != 0 || !slices.Equal(s.Listed, []string{f.SessionID}) || s.Text != f.Text ||
		!slices.Contains(s.Kinds, "user_message_chunk") || !slices.Contains(s.Kinds, "tool_call_update::completed") {
		t.Errorf("second: %+v", s)
	}
	th := got.Third
	if th.Stop != "end_turn" || th.Code != 0 || !slices.Contains(th.FS, "read "+filepath.Join(ws, "notes.txt")) {
		t.Errorf("third: %+v", th)
	}
	reqs := srv.Requests()
	if len(reqs) != 6 || reqs[len(reqs)-1].Decoded == nil {
		t.Fatalf("the mock vendor got %d requests, want 6", len(reqs))
	}
	// The prompt after the cancel: effort high (Anthropic's budget for
	// it), the cancelled call answered in the history.
	if d := reqs[3].Decoded; d == nil || d.Thinking == nil || d.Thinking.BudgetTokens != 16384 {
		t.Errorf("the request after effort high: thinking %+v", d)
	}
	if after := string(reqs[3].Body); !strings.Contains(after, "call_long") || !strings.Contains(after, "Are you still there?") {
		t.Errorf("the request after the cancel lacks the cancelled call or the prompt: %s", after)
	}
	last := string(reqs[len(reqs)-1].Body)
	if !strings.Contains(last, "UNSAVED-BUFFER-TEXT") || strings.Contains(last, "saved on disk") {
		t.Errorf("the model was not sent the editor's buffer: %s", last)
	}
}
