package runner

import (
	"fmt"
	"net/url"
	"slices"
	"strings"

	"github.com/reinhq/rein/workspace"
)

// AddMCPServers adds MCP servers a front's client brings (an editor's, in
// ACP's session/new and session/load, SPEC FRONT-1) to the workspace's for
// the sessions of this setup and the setups [Setup.WithModel] derives.
// They are started as the workspace's are and under the same rules
// (SPEC PERM-5, MCP-2): only in a trusted workspace, since a stdio server
// runs in it; a stdio server gets a clean environment (none of rein's
// keys) plus the variables the client sets, which may not be rein's
// credentials; their tools are screened and may be withheld for review
// like any server's. Call it before the setup's first session binds:
// servers connect once, then.
func (s *Setup) AddMCPServers(defs []workspace.MCPServer) error {
	if len(defs) == 0 {
		return nil
	}
	root := s.ws.Root
	if !s.cfg.Loaded.Trust.Trusted {
		return fmt.Errorf("the workspace %s is not trusted, and rein starts no MCP server in it, the client's included: "+
			"trust it first (rein trust %s), or remove the client's MCP servers", root, root)
	}
	if s.cfg.NoTools {
		return fmt.Errorf("this run has no tools, so the client's MCP servers cannot be used")
	}
	taken := map[string]bool{}
	for _, d := range s.cfg.Loaded.Definitions().MCP {
		taken[d.Name] = true
	}
	for _, d := range defs {
		if err := s.checkClientMCP(d, taken); err != nil {
			return err
		}
		taken[d.Name] = true
	}
	c := s.mcp
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.started {
		return fmt.Errorf("the MCP servers are connected already; the client's servers must come before the first session")
	}
	for _, d := range defs {
		d.Origin = originClient
		if d.Declared == "" {
			d.Declared = d.Name
		}
		c.extra = append(c.extra, d)
	}
	return nil
}

// originClient is the origin of the servers a front's client brings.
const originClient workspace.Origin = "client"

// checkClientMCP checks one of the client's servers: its name (unique
// among the workspace's and the client's), one transport, and no rein
// credential in its environment.
func (s *Setup) checkClientMCP(d workspace.MCPServer, taken map[string]bool) error {
	if err := workspace.CheckMCPName(d.Name); err != nil {
		return fmt.Errorf("the client's %w", err)
	}
	if taken[d.Name] {
		return fmt.Errorf("the client's MCP server %s has the name of another server of this session (the workspace's or the client's); rename one", d.Name)
	}
	switch {
	case d.Command == "" && d.URL == "":
		return fmt.Errorf("the client's MCP server %s has neither a command nor a url", d.Name)
	case d.Command != "" && d.URL != "":
		return fmt.Errorf("the client's MCP server %s has both a command and a url; give one", d.Name)
	case d.URL != "":
		u, err := url.Parse(d.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("the client's MCP server %s: url %q is not an http or https URL", d.Name, d.URL)
		}
	}
	var refused []string
	for k := range d.Env {
		if s.cfg.Loaded.Credential(k) {
			refused = append(refused, k)
		}
	}
	if len(refused) > 0 {
		slices.Sort(refused)
		return fmt.Errorf("the client's MCP server %s sets %s: an MCP server never receives rein's credentials (provider keys and OAuth tokens, your profiles' key variables, REIN_* variables)",
			d.Name, strings.Join(refused, ", "))
	}
	return nil
}
