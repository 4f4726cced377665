package workspace

import (
	"encoding/json"
	"errors"
	"io/fs"
	"path/filepath"
)

// This file reads the MCP servers of Claude Code's own state file,
// ~/.claude.json (SPEC COMPAT-1, MCP-1): the user's (top-level
// mcpServers, `claude mcp add -s user`) and the current project's
// (projects["<abs path>"].mcpServers, `claude mcp add`, the default local
// scope). Both are the user's own declarations, written by Claude Code on
// the user's command; they load as the user's servers, before rein's
// mcp.yaml, which wins on a name. The file also holds Claude Code's
// session and history and may be large: it is read up to 64 MiB, and only
// these keys are looked at.

// maxClaudeJSON bounds ~/.claude.json.
const maxClaudeJSON = 64 << 20

// claudeJSONDoc is the part of ~/.claude.json rein reads.
type claudeJSONDoc struct {
	MCPServers json.RawMessage `json:"mcpServers"`
	Projects   map[string]struct {
		MCPServers json.RawMessage `json:"mcpServers"`
	} `json:"projects"`
}

// readClaudeJSON returns the MCP servers ~/.claude.json declares for the
// user and for the workspace at root (its key is the project's absolute
// path, links resolved or not), with the problems of the entries that do
// not load.
func readClaudeJSON(path, root string, env envReader) ([]MCPServer, []Problem) {
	data, err := readRegular(path, false, maxClaudeJSON)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, []Problem{{Path: path, Msg: "cannot read Claude Code's MCP servers: " + err.Error()}}
	}
	var doc claudeJSONDoc
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, []Problem{{Path: path, Msg: "cannot read Claude Code's MCP servers: " + jsonErr(err)}}
	}
	var out []MCPServer
	var probs []Problem
	add := func(raw json.RawMessage, where string) {
		if len(raw) == 0 || isJSONNull(raw) {
			return
		}
		wrapped, _ := json.Marshal(map[string]json.RawMessage{"mcpServers": raw})
		servers, ps := parseMCPJSON(path, wrapped, env)
		for i := range ps {
			ps[i].Line = 0 // lines of the extract, not of the file
			ps[i].Msg = where + ": " + ps[i].Msg
		}
		for i := range servers {
			servers[i].Origin = OriginUser
		}
		out, probs = append(out, servers...), append(probs, ps...)
	}
	add(doc.MCPServers, "mcpServers")
	if root != "" {
		keys := []string{filepath.Clean(root)}
		if real := realPath(root); real != keys[0] {
			keys = append(keys, real)
		}
		for _, k := range keys {
			if p, ok := doc.Projects[k]; ok {
				add(p.MCPServers, `projects["`+k+`"].mcpServers`)
				break
			}
		}
	}
	return out, probs
}
