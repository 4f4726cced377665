package acp

import (
	"fmt"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/reinhq/rein/runner"
	"github.com/reinhq/rein/workspace"
)

// maxClientMCP bounds the MCP servers one session/new or session/load may
// bring: each is a process or a connection rein holds.
const maxClientMCP = 32

// clientMCP adds the MCP servers the client passes (session/new,
// session/load) to the session's setup (SPEC FRONT-1, MCP-1): stdio,
// streamable HTTP and SSE servers, under the workspace's trust and
// secret rules (runner.Setup.AddMCPServers). An error names what the
// client must change.
func clientMCP(s *runner.Setup, servers []sdk.McpServer) error {
	if len(servers) > maxClientMCP {
		return sdk.NewInvalidParams(fmt.Sprintf("mcpServers: %d servers, more than the %d rein takes per session", len(servers), maxClientMCP))
	}
	defs := make([]workspace.MCPServer, 0, len(servers))
	for i, m := range servers {
		d, err := mcpDef(m)
		if err != nil {
			return sdk.NewInvalidParams(fmt.Sprintf("mcpServers[%d]: %v", i, err))
		}
		defs = append(defs, d)
	}
	if err := s.AddMCPServers(defs); err != nil {
		return sdk.NewInvalidParams("mcpServers: " + err.Error())
	}
	return nil
}

// mcpDef is a client's server as a workspace definition.
func mcpDef(m sdk.McpServer) (workspace.MCPServer, error) {
	switch {
	case m.Stdio != nil:
		d := workspace.MCPServer{Name: m.Stdio.Name, Command: m.Stdio.Command, Args: m.Stdio.Args}
		if len(m.Stdio.Env) > 0 {
			d.Env = map[string]string{}
			for _, v := range m.Stdio.Env {
				d.Env[v.Name] = v.Value
			}
		}
		return d, nil
	case m.Http != nil:
		return workspace.MCPServer{Name: m.Http.Name, URL: m.Http.Url, Headers: headers(m.Http.Headers)}, nil
	case m.Sse != nil:
		return workspace.MCPServer{Name: m.Sse.Name, URL: m.Sse.Url, Headers: headers(m.Sse.Headers), Transport: "sse"}, nil
	case m.Acp != nil:
		return workspace.MCPServer{}, fmt.Errorf("server %s: rein does not take MCP servers over the ACP channel (mcpCapabilities.acp is false)", m.Acp.Name)
	}
	return workspace.MCPServer{}, fmt.Errorf("unknown transport: rein takes stdio, http and sse servers")
}

// headers are HTTP headers as a map (a repeated name keeps the last).
func headers(hs []sdk.HttpHeader) map[string]string {
	if len(hs) == 0 {
		return nil
	}
	out := make(map[string]string, len(hs))
	for _, h := range hs {
		out[h.Name] = h.Value
	}
	return out
}
