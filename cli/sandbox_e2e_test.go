package cli

import (
	"net/http"
	"net/http/httptest"
	"os"
	osexec "os/exec"
	"strings"
	"testing"

	"github.com/reinhq/rein/exec"
	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/llm/llmtest"
)

// TOOL-7 end to end, with default settings: the model's go build in a Go
// module works in the sandbox (the user's GOCACHE shared, $TMPDIR the
// session's), and a refused connection reaches the model with the setting
// that would allow it.
func TestSandboxDefaultsEndToEnd_TOOL7(t *testing.T) {
	if (&exec.Sandbox{}).Available() != nil {
		t.Skip("environment: bwrap cannot run here")
	}
	goBin, err := osexec.LookPath("go")
	if err != nil {
		t.Skip("environment: go is not installed")
	}
	gocache, err := goEnv(goBin, "GOCACHE")
	if err != nil || gocache == "" {
		t.Skipf("environment: no GOCACHE: %v", err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("host-service")) }))
	t.Cleanup(srv.Close)
	port := srv.URL[strings.LastIndexByte(srv.URL, ':')+1:]

	te := newTestEnv(t)
	te.env["GOCACHE"] = gocache // the user's: shared with the sandbox
	te.write("go.mod", "module example.com/hello\n\ngo 1.22\n")
	te.write("main.go", "package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(\"built-in-the-sandbox\") }\n")
	s := te.script("m",
		llmtest.Reply{ToolCalls: []llm.ToolUse{llmtest.Call("c1", "bash", `{"command":"go build -o hello . && ./hello && test \"$TMPDIR\" = \"$GOTMPDIR\""}`)}},
		llmtest.Reply{ToolCalls: []llm.ToolUse{llmtest.Call("c2", "bash", `{"command":"curl -fsS http://localhost:`+port+`/"}`)}},
		llmtest.Reply{Text: "done"})
	out, errs := te.mustRun(ExitOK, "run", "--model", "scripted/m", "--permission-mode", "bypass", "-o", "stream-json", "build it")
	if !strings.Contains(out, "built-in-the-sandbox") {
		t.Fatalf("go build did not run in the sandbox:\n%s\n%s", out, errs)
	}
	reqs := s.Requests()
	last := reqs[len(reqs)-1]
	var result string
	for _, m := range last.Messages {
		for _, b := range m.Content {
			if tr, ok := b.(*llm.ToolResult); ok && tr.ToolUseID == "c2" {
				result = llm.Message{Content: tr.Content}.TextOf()
			}
		}
	}
	if strings.Contains(result, "host-service") {
		t.Fatalf("the sandbox reached the host's loopback without an allow-list: %s", result)
	}
	if !strings.Contains(result, "localhost:"+port) || !strings.Contains(result, "sandbox.allow_hosts") {
		t.Fatalf("the model was not told which setting allows it:\n%s", result)
	}
	if _, err := os.Stat(te.ws + "/hello"); err != nil {
		t.Errorf("the binary is not in the workspace: %v", err)
	}
}

func goEnv(goBin, key string) (string, error) {
	b, err := osexec.Command(goBin, "env", key).Output()
	return strings.TrimSpace(string(b)), err
}
