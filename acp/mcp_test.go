package acp_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	sdk "github.com/coder/acp-go-sdk"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/llm/llmtest"
)

// stdioMCPEnv makes the test binary an MCP server on stdio (TestMain).
const stdioMCPEnv = "ACPTEST_STDIO_MCP"

func TestMain(m *testing.M) {
	if os.Getenv(stdioMCPEnv) == "1" {
		srv := mcp.NewServer(&mcp.Implementation{Name: "stdio-test", Version: "1"}, nil)
		srv.AddTool(&mcp.Tool{Name: "ping", Description: "Answers pong.", InputSchema: map[string]any{"type": "object"}},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				key := "no provider key"
				if os.Getenv("ANTHROPIC_API_KEY") != "" {
					key = "LEAKED provider key"
				}
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "pong from stdio, " + key + ", " + os.Getenv("CLIENT_VAR")}}}, nil
			})
		if err := srv.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// httpMCP starts a streamable HTTP MCP server on 127.0.0.1 with a tool
// lookup; it requires the header X-Token: t0k.
func httpMCP(t *testing.T) string {
	srv := mcp.NewServer(&mcp.Implementation{Name: "http-test", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "lookup", Description: "Looks a word up.", InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "found over http"}}}, nil
		})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Token") != "t0k" {
			http.Error(w, "no token", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	return ts.URL
}

// stdioServer is the test binary as a client's stdio MCP server.
func stdioServer(t *testing.T, name string, env ...sdk.EnvVariable) sdk.McpServer {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return sdk.McpServer{Stdio: &sdk.McpServerStdio{Name: name, Command: exe, Args: []string{},
		Env: append([]sdk.EnvVariable{{Name: stdioMCPEnv, Value: "1"}}, env...)}}
}

// The client's MCP servers, stdio and streamable HTTP, are connected for
// the session in a trusted workspace, their tools named mcp__<server>__*
// (SPEC FRONT-1, MCP-1); a stdio server gets the variables the client
// sets, not rein's provider key (MCP-2).
func TestClientMCPServers_FRONT1(t *testing.T) {
	e := newEnv(t,
		llmtest.Reply{ToolCalls: []llm.ToolUse{llmtest.Call("m1", "mcp__local__ping", `{}`), llmtest.Call("m2", "mcp__web__lookup", `{}`)}},
		llmtest.Reply{Text: "done"},
	)
	e.trusted = true
	e.vars["ANTHROPIC_API_KEY"] = "sk-secret"
	web := httpMCP(t) // before the connection: it is closed after, when the session has let go of it
	conn, cl := e.connect()
	cl.answer = pick("once")
	r, err := conn.NewSession(context.Background(), sdk.NewSessionRequest{Cwd: e.work, McpServers: []sdk.McpServer{
		stdioServer(t, "local", sdk.EnvVariable{Name: "CLIENT_VAR", Value: "client-value"}),
		{Http: &sdk.McpServerHttpInline{Name: "web", Type: "http", Url: web, Headers: []sdk.HttpHeader{{Name: "X-Token", Value: "t0k"}}}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	prompt(t, conn, r.SessionId, "use them")
	if got := resultOf(e, "m1"); !strings.Contains(got, "pong from stdio, no provider key, client-value") {
		t.Errorf("stdio tool: %q", got)
	}
	if got := resultOf(e, "m2"); !strings.Contains(got, "found over http") {
		t.Errorf("http tool: %q", got)
	}
}

// Attack rows (FRONT-1, PERM-5, MCP-2): the client's servers are refused,
// with what to do, in a workspace not trusted; a server given one of
// rein's credentials, a bad name, a name taken, no transport, a URL that
// is not http, the ACP transport, too many servers.
func TestAttackClientMCP_FRONT1(t *testing.T) {
	ctx := context.Background()
	untrusted := newEnv(t)
	conn, _ := untrusted.connect()
	_, err := conn.NewSession(ctx, sdk.NewSessionRequest{Cwd: untrusted.work, McpServers: []sdk.McpServer{stdioServer(t, "local")}})
	if err == nil || !strings.Contains(err.Error(), "not trusted") || !strings.Contains(err.Error(), "rein trust "+untrusted.work) {
		t.Errorf("untrusted workspace: err = %v", err)
	}
	id := untrusted.newSession(conn) // without servers it opens
	conn2, _ := untrusted.connect()
	_, err = conn2.LoadSession(ctx, sdk.LoadSessionRequest{SessionId: id, Cwd: untrusted.work, McpServers: []sdk.McpServer{stdioServer(t, "local")}})
	if err == nil || !strings.Contains(err.Error(), "not trusted") {
		t.Errorf("untrusted workspace, load: err = %v", err)
	}

	e := newEnv(t)
	e.trusted = true
	conn, _ = e.connect()
	many := make([]sdk.McpServer, 33)
	for i := range many {
		many[i] = stdioServer(t, "s"+strings.Repeat("x", i+1))
	}
	for _, tc := range []struct {
		name    string
		servers []sdk.McpServer
		want    string
	}{
		{"rein's provider key", []sdk.McpServer{stdioServer(t, "local", sdk.EnvVariable{Name: "ANTHROPIC_API_KEY", Value: "x"})}, "credentials"},
		{"a REIN_ variable", []sdk.McpServer{stdioServer(t, "local", sdk.EnvVariable{Name: "REIN_MODEL", Value: "x"})}, "credentials"},
		{"a name with __", []sdk.McpServer{stdioServer(t, "a__b")}, "not valid"},
		{"a name with a slash", []sdk.McpServer{stdioServer(t, "../x")}, "not valid"},
		{"a name taken", []sdk.McpServer{stdioServer(t, "dup"), stdioServer(t, "dup")}, "name of another server"},
		{"no command", []sdk.McpServer{{Stdio: &sdk.McpServerStdio{Name: "empty"}}}, "neither a command nor a url"},
		{"a file URL", []sdk.McpServer{{Http: &sdk.McpServerHttpInline{Name: "f", Type: "http", Url: "file:///etc/passwd"}}}, "not an http"},
		{"the ACP transport", []sdk.McpServer{{Acp: &sdk.McpServerAcpInline{Name: "a", Type: "acp", Id: "x"}}}, "ACP channel"},
		{"too many", many, "more than the 32"},
	} {
		_, err := conn.NewSession(ctx, sdk.NewSessionRequest{Cwd: e.work, McpServers: tc.servers})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want one saying %q", tc.name, err, tc.want)
		}
	}
}
