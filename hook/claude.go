package hook

import (
	"encoding/json"
	"path/filepath"
	"strings"
)

// This file renders an [Input] the way Claude Code sends it, for hooks
// declared in Claude Code's format (SPEC COMPAT-1): Claude Code's event and
// tool names, its tool_input fields (file_path, timeout in milliseconds,
// absolute paths) and its tool_response objects (Bash's {stdout, stderr,
// interrupted, isImage}, Edit's {filePath, oldString, …}). A rewritten
// input (updatedInput) comes back the other way. Hooks declared in rein's
// format get rein's names and shapes unchanged.

// claudeField renames one field of a rein tool's input to Claude Code's.
type claudeField struct {
	rein, claude string
	path         bool    // a path: sent absolute (against the input's cwd)
	scale        float64 // a number multiplied by this on the way out (bash: seconds → ms)
}

// claudeFields are the input fields of rein's tools that Claude Code's
// tools call otherwise, or that it sends absolute. Fields not listed go
// as they are (bash's dir, web_search's max_results): a script ignores
// what it does not know.
var claudeFields = map[string][]claudeField{
	"bash":       {{rein: "timeout", claude: "timeout", scale: 1000}, {rein: "unsandboxed", claude: "dangerouslyDisableSandbox"}, {rein: "dir", claude: "dir", path: true}},
	"read_file":  {{rein: "path", claude: "file_path", path: true}},
	"write_file": {{rein: "path", claude: "file_path", path: true}},
	"edit_file":  {{rein: "path", claude: "file_path", path: true}},
	"multi_edit": {{rein: "path", claude: "file_path", path: true}},
	"glob":       {{rein: "path", claude: "path", path: true}},
	"grep":       {{rein: "path", claude: "path", path: true}, {rein: "case_insensitive", claude: "-i"}, {rein: "context", claude: "-C"}},
	"list_dir":   {{rein: "path", claude: "path", path: true}},
	"task":       {{rein: "agent", claude: "subagent_type"}},
}

// claudeModes are Claude Code's names of rein's permission modes:
// read-only is nearest to plan (nothing changes), strict to default (what
// is not allowed is asked). Claude Code's own names pass unchanged.
var claudeModes = map[string]string{
	"default": "default", "strict": "default", "accept-edits": "acceptEdits", "plan": "plan",
	"read-only": "plan", "bypass": "bypassPermissions",
}

// claudeInput renders the input as Claude Code would send it.
func claudeInput(in Input) Input {
	reinTool := in.ToolName
	in.Event = Event(in.Event.ClaudeName())
	if m, ok := claudeModes[in.PermissionMode]; ok {
		in.PermissionMode = m
	}
	if n, ok := claudeToolOf[in.ToolName]; ok {
		in.ToolName = n
	}
	if len(in.ToolInput) > 0 {
		in.ToolInput = claudeToolInput(reinTool, in.ToolInput, in.CWD)
	}
	if len(in.ToolResponse) > 0 {
		if in.Event == Event(PostToolError.ClaudeName()) {
			in.ToolResponse = nil // Claude Code sends error, not tool_response
		} else {
			in.ToolResponse = claudeToolResponse(in.ToolName, in.ToolInput, in.ToolResponse, in.CWD)
		}
	}
	return in
}

// claudeToolInput maps a rein tool's input to Claude Code's fields.
func claudeToolInput(tool string, raw json.RawMessage, cwd string) json.RawMessage {
	return remap(tool, raw, func(m map[string]any, f claudeField) {
		v, ok := m[f.rein]
		if !ok {
			if f.path && tool == "list_dir" && cwd != "" {
				m[f.claude] = cwd // Claude Code's LS always names its directory
			}
			return
		}
		delete(m, f.rein)
		switch x := v.(type) {
		case string:
			if f.path {
				v = absPath(x, cwd)
			}
		case float64:
			if f.scale != 0 {
				v = x * f.scale
			}
		}
		m[f.claude] = v
	})
}

// reinToolInput maps an input a Claude Code hook rewrote back to rein's
// fields. A field given both ways takes Claude Code's value.
func reinToolInput(tool string, raw json.RawMessage) json.RawMessage {
	return remap(tool, raw, func(m map[string]any, f claudeField) {
		v, ok := m[f.claude]
		if !ok {
			return
		}
		delete(m, f.claude)
		if x, isNum := v.(float64); isNum && f.scale != 0 {
			v = x / f.scale
		}
		m[f.rein] = v
	})
}

// remap applies move to the input object of tool for each of its
// [claudeFields]; an input that is not an object, or a tool without such
// fields, is returned as it is.
func remap(tool string, raw json.RawMessage, move func(map[string]any, claudeField)) json.RawMessage {
	fields := claudeFields[tool]
	var m map[string]any
	if len(fields) == 0 || json.Unmarshal(raw, &m) != nil || m == nil {
		return raw
	}
	for _, f := range fields {
		move(m, f)
	}
	out, err := json.Marshal(m)
	if err != nil {
		return raw
	}
	return out
}

// absPath makes p absolute against cwd; an empty p or cwd leaves it.
func absPath(p, cwd string) string {
	if p == "" || filepath.IsAbs(p) || cwd == "" {
		return p
	}
	if p == "~" || strings.HasPrefix(p, "~/") {
		return p // the tool expands it; a hook sees what the model wrote
	}
	return filepath.Join(cwd, p)
}

// reinResponse is rein's tool_response: the result's text as the model read
// it, and whether it is an error.
type reinResponse struct {
	Output  string `json:"output"`
	IsError bool   `json:"is_error"`
}

// claudeToolResponse builds Claude Code's tool_response object for the
// tools that have one, from rein's {output, is_error} and the input as
// sent (Claude Code's fields, absolute paths). rein's tools return text,
// so what Claude Code computes besides (structuredPatch, originalFile,
// durations) is left out rather than made up; content fields carry the
// text the model read. Tools without a Claude Code shape (MCP tools, rein's
// own) keep rein's.
func claudeToolResponse(claudeTool string, input, raw json.RawMessage, cwd string) json.RawMessage {
	var r reinResponse
	if json.Unmarshal(raw, &r) != nil {
		return raw
	}
	var in map[string]any
	_ = json.Unmarshal(input, &in)
	str := func(k string) string { s, _ := in[k].(string); return s }
	var out any
	switch claudeTool {
	case "Bash":
		out = map[string]any{"stdout": r.Output, "stderr": "", "interrupted": false, "isImage": false}
	case "Read":
		out = map[string]any{"type": "text", "file": map[string]any{"filePath": str("file_path"), "content": r.Output}}
	case "Write":
		out = map[string]any{"filePath": str("file_path"), "content": str("content"), "success": !r.IsError}
	case "Edit":
		out = map[string]any{"filePath": str("file_path"), "oldString": str("old_string"), "newString": str("new_string"),
			"replaceAll": in["replace_all"] == true, "userModified": false}
	case "MultiEdit":
		out = map[string]any{"filePath": str("file_path"), "edits": in["edits"], "userModified": false}
	case "Glob":
		files, cut := fileList(r.Output, cwd)
		out = map[string]any{"filenames": files, "numFiles": len(files), "truncated": cut}
	case "Grep":
		mode := firstNonEmpty(str("output_mode"), "files_with_matches")
		o := map[string]any{"mode": mode}
		if mode == "files_with_matches" {
			files, _ := fileList(r.Output, cwd)
			o["filenames"], o["numFiles"] = files, len(files)
		} else {
			o["content"] = r.Output
		}
		out = o
	case "WebFetch":
		out = map[string]any{"url": str("url"), "result": r.Output}
	case "WebSearch":
		out = map[string]any{"query": str("query"), "results": r.Output}
	default:
		return raw
	}
	b, err := json.Marshal(out)
	if err != nil {
		return raw
	}
	return b
}

// fileList reads the paths a glob or grep listed, one a line, made
// absolute; rein's notes ("… 3 more not shown", "No files match …") are
// not paths, and the first says the list was cut.
func fileList(s, cwd string) (files []string, cut bool) {
	files = []string{}
	for _, l := range strings.Split(s, "\n") {
		l = strings.TrimSpace(l)
		switch {
		case l == "" || strings.HasPrefix(l, "No files match"):
		case strings.HasPrefix(l, "…"):
			cut = true
		default:
			files = append(files, absPath(l, cwd))
		}
	}
	return files, cut
}
