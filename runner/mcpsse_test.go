package runner_test

import (
	"testing"

	"github.com/reinhq/rein/runner"
	"github.com/reinhq/rein/workspace"
)

// MCP-1, COMPAT-1: a server declared type sse reaches mcptool as an SSE
// server, with its url and headers; the others stay streamable HTTP or
// stdio.
func TestMCPServerTransport_COMPAT1(t *testing.T) {
	sse := runner.MCPServer(workspace.MCPServer{Name: "old", URL: "http://127.0.0.1:9/sse", Transport: "sse",
		Headers: map[string]string{"Authorization": "Bearer x"}}, nil, 0)
	if !sse.SSE || sse.URL != "http://127.0.0.1:9/sse" || sse.Headers["Authorization"] != "Bearer x" || sse.Command != "" {
		t.Errorf("sse server = %+v", sse)
	}
	if h := runner.MCPServer(workspace.MCPServer{Name: "new", URL: "http://127.0.0.1:9/mcp"}, nil, 0); h.SSE {
		t.Errorf("streamable HTTP server = %+v", h)
	}
	if s := runner.MCPServer(workspace.MCPServer{Name: "cmd", Command: "x"}, nil, 0); s.SSE || s.Command != "x" {
		t.Errorf("stdio server = %+v", s)
	}
}
