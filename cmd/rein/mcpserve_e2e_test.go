package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reinhq/rein/llm/llmtest/mockserver"
)

// inspectorCLI is the MCP Inspector's CLI (@modelcontextprotocol/inspector-cli
// 1.0.3), which scripts/test installs into .cache/npm; REIN_TEST_NPM_PREFIX
// names another npm prefix holding it. The test skips, saying why, when
// node or the package is missing.
func inspectorCLI(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("environment: node is not installed: the MCP Inspector's CLI needs it (scripts/test installs the CLI with npm)")
	}
	prefix := os.Getenv("REIN_TEST_NPM_PREFIX")
	if prefix == "" {
		prefix = filepath.Join(moduleRoot(t), ".cache", "npm")
	}
	p := filepath.Join(prefix, "node_modules", "@modelcontextprotocol", "inspector-cli", "build", "index.js")
	if _, err := os.Stat(p); err != nil {
		t.Skipf("environment: the MCP Inspector's CLI is not installed at %s: scripts/test installs it (npm install --prefix .cache/npm @modelcontextprotocol/inspector-cli@1.0.3)", p)
	}
	return p
}

// FRONT-2: `rein mcp serve` over stdio answers the MCP Inspector's CLI —
// another implementation of the protocol than the go-sdk rein is built on:
// tools/list names rein's tools, and tools/call run completes a task with
// a tool call against the mock Anthropic API, returning the answer and the
// session id, which read_session then reads.
func TestMCPServeInspector_FRONT2(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary; skipped in short mode")
	}
	cli := inspectorCLI(t)
	bin := buildRein(t, t.TempDir())
	srv := mockserver.New()
	defer srv.Close()
	srv.APIKey = fakeKey
	oneToolTask(srv)

	// The inspector CLI 1.0.3 finds its own package.json by testing
	// "../package.json" against its working directory: the workspace's
	// parent holds one so that it starts.
	dir := t.TempDir()
	ws := filepath.Join(dir, "ws")
	if err := os.MkdirAll(filepath.Join(ws, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "package.json"), []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	inspect := func(args ...string) []byte {
		t.Helper()
		full := append([]string{cli, bin, "mcp", "serve", "--model", "claude-sonnet-4-5", "--permission-mode", "bypass"}, args...)
		cmd := exec.Command("node", full...)
		cmd.Dir = ws
		cmd.Env = []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "ANTHROPIC_API_KEY=" + fakeKey, "ANTHROPIC_BASE_URL=" + srv.URL}
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("inspector %s: %v\n%s\n%s", strings.Join(args, " "), err, out, stderr.String())
		}
		return out
	}

	var list struct {
		Tools []struct{ Name string } `json:"tools"`
	}
	if err := json.Unmarshal(inspect("--method", "tools/list"), &list); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range list.Tools {
		names = append(names, tl.Name)
	}
	if got := strings.Join(names, ","); got != "continue,list_sessions,read_session,run" {
		t.Errorf("tools/list = %s", got)
	}

	var call struct {
		IsError           bool `json:"isError"`
		StructuredContent struct {
			SessionID  string `json:"session_id"`
			Text       string `json:"text"`
			StopReason string `json:"stop_reason"`
			Turns      int    `json:"turns"`
		} `json:"structuredContent"`
	}
	out := inspect("--method", "tools/call", "--tool-name", "run", "--tool-arg", "prompt=Run echo hello-from-tool in the shell and tell me what it printed.")
	if err := json.Unmarshal(out, &call); err != nil {
		t.Fatalf("%s: %v", out, err)
	}
	r := call.StructuredContent
	if call.IsError || r.Text != "The command printed: hello-from-tool" || r.StopReason != "completed" || r.Turns != 2 || r.SessionID == "" {
		t.Fatalf("tools/call run = %s", out)
	}
	if reqs := srv.Requests(); len(reqs) != 2 || !toolResultHolds(reqs[1], "hello-from-tool") {
		t.Errorf("%d model requests; the second must carry the command's output", len(reqs))
	}

	read := inspect("--method", "tools/call", "--tool-name", "read_session", "--tool-arg", "session_id="+r.SessionID)
	if !strings.Contains(string(read), "echo hello-from-tool") {
		t.Errorf("read_session = %s", read)
	}
}
