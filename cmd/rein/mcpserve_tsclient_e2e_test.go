package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/reinhq/rein/llm/llmtest/mockserver"
)

// mcpSDKVersion is the official TypeScript MCP SDK scripts/test installs
// (the version the MCP Inspector's CLI and the reference servers already
// pull in, so installing it pinned downloads nothing new).
const mcpSDKVersion = "1.32.2"

// mcpSDK is the directory of @modelcontextprotocol/sdk in .cache/npm (or
// under REIN_TEST_NPM_PREFIX); the test skips, saying why, when node or
// the package at the pinned version is missing.
func mcpSDK(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("environment: node is not installed: the TypeScript MCP client test needs it")
	}
	prefix := os.Getenv("REIN_TEST_NPM_PREFIX")
	if prefix == "" {
		prefix = filepath.Join(moduleRoot(t), ".cache", "npm")
	}
	dir := filepath.Join(prefix, "node_modules", "@modelcontextprotocol", "sdk")
	pkg, err := os.ReadFile(filepath.Join(dir, "package.json"))
	if err != nil || !strings.Contains(string(pkg), `"version": "`+mcpSDKVersion+`"`) {
		t.Skipf("environment: @modelcontextprotocol/sdk@%s is not installed at %s: scripts/test installs it (npm install --prefix .cache/npm @modelcontextprotocol/sdk@%s)", mcpSDKVersion, dir, mcpSDKVersion)
	}
	return dir
}

// tsClientTask scripts the mock vendor for testdata/mcpclient.mjs: a run
// whose command asks permission (accepted), a continue whose command is
// declined, a continue whose long command is cancelled while it runs, and
// a last continue that answers in words. The long command names the
// workspace, so that its process is told from any other test's.
func tsClientTask(srv *mockserver.Server, ws string) {
	oneToolTask(srv)
	long, _ := json.Marshal(map[string]string{"command": "echo started > started.txt; sleep 60; echo finished > " + filepath.Join(ws, "finished.txt")})
	srv.Enqueue(
		mockserver.Turn{ToolCalls: []mockserver.ToolCall{{ID: "call_2", Name: "bash", Input: `{"command":"echo declined-turn"}`}}},
		mockserver.Turn{Text: "You declined the command, so I did not run it."},
		mockserver.Turn{ToolCalls: []mockserver.ToolCall{{ID: "call_3", Name: "bash", Input: string(long)}}},
		mockserver.Turn{Text: "Still here."},
	)
}

// running returns the processes whose command line holds s (from /proc;
// none where there is no /proc).
func running(s string) []string {
	var found []string
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		cmdline, err := os.ReadFile(filepath.Join(d, "cmdline"))
		if err == nil && strings.Contains(string(cmdline), s) {
			found = append(found, filepath.Base(d)+": "+strings.ReplaceAll(string(cmdline), "\x00", " "))
		}
	}
	return found
}

// tsClientReport is what testdata/mcpclient.mjs prints.
type tsClientReport struct {
	Tools       []string `json:"tools"`
	Asked       []string `json:"asked"`
	First       mcpRun   `json:"first"`
	Second      mcpRun   `json:"second"`
	Progress    []string `json:"progress"`
	CancelError string   `json:"cancelError"`
	Listed      []struct {
		ID   string `json:"id"`
		Runs int    `json:"runs"`
	} `json:"listed"`
	Fourth mcpRun `json:"fourth"`
	Read   struct {
		Messages int    `json:"messages"`
		Text     string `json:"text"`
	} `json:"read"`
}

// mcpRun is the structured result of run and continue.
type mcpRun struct {
	SessionID  string `json:"session_id"`
	Text       string `json:"text"`
	StopReason string `json:"stop_reason"`
	Turns      int    `json:"turns"`
}

// FRONT-2, PERM-3, LOOP-1, SESS-3: the official TypeScript MCP client
// (@modelcontextprotocol/sdk), an implementation not written here, drives
// the built `rein mcp serve` over stdio and over streamable HTTP with the
// bearer token, in the default permission mode against the mock Anthropic
// API: a multi-turn task whose commands ask permission through
// elicitation (one accepted, one declined), a cancel while a command runs
// (notifications/cancelled from an AbortSignal), after which the session
// is continued (over stdio at once: the continue waits for the cancelled
// run to let the session go), and the session listed and read.
func TestMCPServeTypeScriptClient_FRONT2(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs node; skipped in short mode")
	}
	sdk := mcpSDK(t)
	bin := buildRein(t, t.TempDir())
	for _, transport := range []string{"stdio", "http"} {
		t.Run(transport, func(t *testing.T) {
			srv := mockserver.New()
			defer srv.Close()
			srv.APIKey = fakeKey
			ws := filepath.Join(t.TempDir(), "ws")
			if err := os.MkdirAll(filepath.Join(ws, ".git"), 0o755); err != nil {
				t.Fatal(err)
			}
			tsClientTask(srv, ws)
			env := []string{"HOME=" + t.TempDir(), "PATH=" + os.Getenv("PATH"), "REIN_SANDBOX=off", "REIN_MODEL=claude-sonnet-4-5",
				"ANTHROPIC_API_KEY=" + fakeKey, "ANTHROPIC_BASE_URL=" + srv.URL}
			args := []string{filepath.Join("testdata", "mcpclient.mjs"), sdk, ws, transport, bin}
			if transport == "http" {
				token := "e2e-token-0123456789abcdefghijklmnopqrstuv"
				args[len(args)-1] = serveMCPHTTP(t, bin, ws, append(env, "REIN_MCP_TOKEN="+token))
				env = append(env, "MCP_TOKEN="+token)
			}
			cmd := exec.Command("node", args...)
			cmd.Env = env
			var stderr strings.Builder
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("node: %v\nstdout: %s\nstderr:\n%s", err, out, stderr.String())
			}
			var got tsClientReport
			if err := json.Unmarshal(out, &got); err != nil {
				t.Fatalf("%v: %s\nstderr:\n%s", err, out, stderr.String())
			}
			checkTSClientReport(t, got, ws, srv)
		})
	}
}

// checkTSClientReport checks what the client saw, and what the mock vendor
// was sent.
func checkTSClientReport(t *testing.T, got tsClientReport, ws string, srv *mockserver.Server) {
	t.Helper()
	if !slices.Equal(got.Tools, []string{"continue", "list_sessions", "read_session", "run"}) {
		t.Errorf("tools = %v", got.Tools)
	}
	sid := got.First.SessionID
	if f := got.First; sid == "" || f.Text != "The command printed: hello-from-tool" || f.StopReason != "completed" || f.Turns != 2 {
		t.Errorf("run = %+v", f)
	}
	if s := got.Second; s.SessionID != sid || s.Text != "You declined the command, so I did not run it." || s.StopReason != "completed" {
		t.Errorf("continue (declined) = %+v", s)
	}
	// Three questions, one per command, each naming its command.
	want := []string{"echo hello-from-tool", "echo declined-turn", "sleep 60"}
	if len(got.Asked) != len(want) {
		t.Fatalf("asked %d questions, want %d: %q", len(got.Asked), len(want), got.Asked)
	}
	for i, w := range want {
		if !strings.Contains(got.Asked[i], w) {
			t.Errorf("question %d = %q, want it to name %q", i, got.Asked[i], w)
		}
	}
	if !slices.Equal(got.Progress, []string{"running bash"}) || !strings.Contains(got.CancelError, "the user pressed stop") {
		t.Errorf("cancel: progress %q, error %q (want the call aborted once the command ran)", got.Progress, got.CancelError)
	}
	if _, err := os.Stat(filepath.Join(ws, "started.txt")); err != nil {
		t.Errorf("the cancelled command never started: %v", err)
	}
	// The command was stopped with its run, not left sleeping.
	if ps := running(filepath.Join(ws, "finished.txt")); len(ps) > 0 {
		t.Errorf("the cancelled command still runs: %q", ps)
	}
	if len(got.Listed) != 1 || got.Listed[0].ID != sid || got.Listed[0].Runs != 4 {
		t.Errorf("list_sessions = %+v, want %s with its 4 runs", got.Listed, sid)
	}
	if f := got.Fourth; f.SessionID != sid || f.Text != "Still here." || f.StopReason != "completed" {
		t.Errorf("continue after the cancel = %+v", f)
	}
	for _, s := range []string{"echo hello-from-tool", "hello-from-tool", "echo declined-turn", "sleep 60", "Still here."} {
		if !strings.Contains(got.Read.Text, s) {
			t.Errorf("read_session lacks %q:\n%s", s, got.Read.Text)
		}
	}
	reqs := srv.Requests()
	if len(reqs) != 6 {
		t.Fatalf("the mock vendor got %d requests, want 6", len(reqs))
	}
	if !toolResultHolds(reqs[1], "hello-from-tool") {
		t.Error("the first run's second request lacks the command's output")
	}
	if toolResultHolds(reqs[3], "declined-turn") || !toolResultHolds(reqs[3], "the user declined") {
		t.Error("the declined command ran, or the model was not told it was declined")
	}
	// The last request carries the whole conversation, the cancelled call
	// answered (its result written when the run was cancelled).
	last := string(reqs[5].Body)
	for _, s := range []string{"call_1", "call_2", "call_3", "Are you still there?"} {
		if !strings.Contains(last, s) {
			t.Errorf("the request after the cancel lacks %q", s)
		}
	}
}

// serveMCPHTTP starts `rein mcp serve --http 127.0.0.1:0` in ws and returns
// its URL; the server is interrupted when the test ends, and what it wrote
// on stderr is logged when the test failed.
func serveMCPHTTP(t *testing.T, bin, ws string, env []string) string {
	t.Helper()
	cmd := exec.Command(bin, "mcp", "serve", "--http", "127.0.0.1:0")
	cmd.Dir, cmd.Env = ws, env
	s := startServed(t, cmd, "rein mcp serve", "MCP server on http://")
	t.Cleanup(func() { // before startServed's kill: a clean stop
		_ = cmd.Process.Signal(os.Interrupt)
		s.wait()
	})
	return s.base
}
