package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/llm/llmtest"
)

// FRONT-2: `rein mcp serve` over stdio runs a prompt in the workspace with
// the server's model, refuses a call asking for a looser permission mode
// than the server's, and ends when the client closes stdin.
func TestMCPServeStdio_FRONT2(t *testing.T) {
	te := newTestEnv(t)
	te.env["REIN_SANDBOX"] = "off"
	te.write("notes.txt", "ship on Friday\n")
	te.script("m",
		llmtest.Reply{ToolCalls: []llm.ToolUse{llmtest.Call("c1", "read_file", `{"path":"notes.txt"}`)}},
		llmtest.Reply{Text: "Friday."},
	)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	var stderr bytes.Buffer
	a := te.app(&bytes.Buffer{}, &stderr)
	a.Stdin, a.Stdout = inR, outW
	code := make(chan int, 1)
	go func() {
		code <- a.Run(context.Background(), []string{"mcp", "serve", "--model", "scripted/m"})
		outW.Close()
	}()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).
		Connect(context.Background(), &mcp.IOTransport{Reader: outR, Writer: inW}, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "run", Arguments: map[string]any{"prompt": "when do we ship?"}})
	if err != nil {
		t.Fatal(err)
	}
	var out struct {
		Text      string `json:"text"`
		SessionID string `json:"session_id"`
	}
	b, _ := json.Marshal(res.StructuredContent)
	if json.Unmarshal(b, &out); res.IsError || out.Text != "Friday." || out.SessionID == "" {
		t.Errorf("run = %s", b)
	}
	res, err = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "run", Arguments: map[string]any{"prompt": "hi", "permission_mode": "bypass"}})
	if err != nil {
		t.Fatal(err)
	}
	if !res.IsError || !strings.Contains(mcpText(res), "looser than the configured default") {
		t.Errorf("a looser mode = %q", mcpText(res))
	}
	cs.Close()
	inW.Close()
	if c := <-code; c != ExitOK {
		t.Errorf("exit %d after the client left; stderr:\n%s", c, stderr.String())
	}
}

// mcpText is the text of a tool result.
func mcpText(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// --http listens on loopback only (attack row: an address every host
// reaches), and a bad flag is a usage error.
func TestMCPServeFlags_FRONT2(t *testing.T) {
	te := newTestEnv(t)
	for _, args := range [][]string{
		{"mcp", "serve", "--http", "0.0.0.0:7879"},
		{"mcp", "serve", "--http", ":7879"},
		{"mcp", "serve", "--permission-mode", "sloppy"},
	} {
		code, _, stderr := te.run(args...)
		if code != ExitUsage {
			t.Errorf("rein %s: exit %d, want %d\n%s", strings.Join(args, " "), code, ExitUsage, stderr)
		}
	}
	_, stderr := te.mustRun(ExitUsage, "mcp", "serve", "--http", "0.0.0.0:7879")
	if !strings.Contains(stderr, "loopback") {
		t.Errorf("stderr = %q", stderr)
	}
	// The token (attack rows): a weak one is refused before the server
	// listens; --token-file is for --http only.
	te.env["REIN_MCP_TOKEN"] = "short"
	if _, stderr := te.mustRun(ExitUsage, "mcp", "serve", "--http", "127.0.0.1:0"); !strings.Contains(stderr, "REIN_MCP_TOKEN") || !strings.Contains(stderr, "fewer than 16") {
		t.Errorf("weak token: stderr = %q", stderr)
	}
	delete(te.env, "REIN_MCP_TOKEN")
	if _, stderr := te.mustRun(ExitUsage, "mcp", "serve", "--token-file", "t.txt"); !strings.Contains(stderr, "--token-file is for --http") {
		t.Errorf("--token-file without --http: stderr = %q", stderr)
	}
	if _, stderr := te.mustRun(ExitUsage, "mcp", "serve", "--http", "127.0.0.1:0", "--token-file", "missing.txt"); !strings.Contains(stderr, "--token-file") {
		t.Errorf("missing token file: stderr = %q", stderr)
	}
}

// bearerTransport sends token as a bearer token.
type bearerTransport string

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+string(b))
	return http.DefaultTransport.RoundTrip(r)
}

// lineWriter hands each line written to it to a channel.
type lineWriter struct{ lines chan string }

func (w lineWriter) Write(p []byte) (int, error) {
	for l := range strings.SplitSeq(strings.TrimRight(string(p), "\n"), "\n") {
		select {
		case w.lines <- l:
		default:
		}
	}
	return len(p), nil
}

// FRONT-2: `rein mcp serve --http` serves streamable HTTP on the loopback
// address it names, to a client with the bearer token it printed (one
// without is refused), and stops when the process is told to.
func TestMCPServeHTTP_FRONT2(t *testing.T) {
	te := newTestEnv(t)
	te.env["REIN_SANDBOX"] = "off"
	te.script("m", llmtest.Reply{Text: "over HTTP"})
	lines := make(chan string, 16)
	a := te.app(&bytes.Buffer{}, &bytes.Buffer{})
	a.Stderr = lineWriter{lines}
	ctx, stop := context.WithCancel(context.Background())
	code := make(chan int, 1)
	go func() { code <- a.Run(ctx, []string{"mcp", "serve", "--model", "scripted/m", "--http", "127.0.0.1:0"}) }()
	var url, token string
	for url == "" || token == "" {
		select {
		case l := <-lines:
			if _, u, ok := strings.Cut(l, "MCP server on "); ok {
				url, _, _ = strings.Cut(u, " ")
			}
			if _, tk, ok := strings.Cut(l, "Authorization: Bearer "); ok {
				token, _, _ = strings.Cut(tk, " ")
			}
		case c := <-code:
			t.Fatalf("rein mcp serve --http exited %d before listening", c)
		}
	}
	if len(token) < 40 {
		t.Fatalf("printed token %q", token)
	}
	if cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).
		Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url}, nil); err == nil {
		cs.Close()
		t.Fatal("a client without the token connected")
	}
	auth := &http.Client{Transport: bearerTransport(token)}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).
		Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: auth}, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "run", Arguments: map[string]any{"prompt": "hi"}})
	if err != nil || res.IsError || !strings.Contains(mcpText(res), "over HTTP") {
		t.Fatalf("run over HTTP: %v %q", err, mcpText(res))
	}
	cs.Close()
	stop()
	if c := <-code; c != ExitOK {
		t.Errorf("exit %d after the stop", c)
	}
}
