package workspace

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/reinhq/rein/permission"
)

// This file reads Claude Code's settings files (SPEC COMPAT-1) — managed
// (/etc/claude-code/managed-settings.json and managed-settings.d/*.json),
// the user's (~/.claude/settings.json), the project's
// (.claude/settings.json) and the local one (.claude/settings.local.json) —
// for their permissions (rules, defaultMode, additionalDirectories) and
// env. Hooks are read by package hook ([Loaded.Hooks]).
//
// Precedence. Rules add up across every file, rein's and Claude Code's, and
// are decided deny → ask → allow (a deny anywhere wins, as in both). A
// workspace's allow rules (project and local) apply only once the workspace
// is trusted; its deny and ask rules always (SPEC PERM-5). The mode is
// resolved with rein's layers, highest first: flags, REIN_* variables,
// .rein/settings.local.yaml, .claude/settings.local.json,
// .rein/settings.yaml, .claude/settings.json, managed, rein's user
// settings, ~/.claude/settings.json — rein's own file wins over Claude
// Code's at the same level, and a workspace file may only tighten the mode.

// ClaudeScope is the level of a Claude Code settings file.
type ClaudeScope string

// The levels, from the highest.
const (
	ClaudeManaged ClaudeScope = "managed"
	ClaudeLocal   ClaudeScope = "local"
	ClaudeProject ClaudeScope = "project"
	ClaudeUser    ClaudeScope = "user"
)

// workspace reports a level a repository controls.
func (s ClaudeScope) workspace() bool { return s == ClaudeProject || s == ClaudeLocal }

// ClaudeFile is one Claude Code settings file as read.
type ClaudeFile struct {
	Scope ClaudeScope
	Path  string
	// Rules are its permission rules translated into rein's, each with
	// Source user (managed, user) or workspace (project, local).
	Rules []permission.Rule
	// Mode is rein's mode for its permissions.defaultMode; "" when it sets
	// none or one rein cannot map (then in Unmapped).
	Mode permission.Mode
	// Env is its env: variables for the commands the model runs.
	Env map[string]string
	// DisableBypass is permissions.disableBypassPermissionsMode: "disable".
	DisableBypass bool
	// Unmapped says, one line each, what the file holds that rein does
	// not apply: rules it cannot translate, unsupported keys.
	Unmapped []string
	// Notes say how a mapped entry's meaning differs in rein.
	Notes []string
	// MCP is what the file says of the project's .mcp.json servers.
	MCP ClaudeMCPApproval
}

// ClaudeMCPApproval is what one settings file says of the servers of the
// project's .mcp.json (SPEC COMPAT-1): enableAllProjectMcpServers (nil
// when unset), enabledMcpjsonServers (nil when unset) and
// disabledMcpjsonServers.
type ClaudeMCPApproval struct {
	EnableAll *bool
	Enabled   []string
	Disabled  []string
}

// maxClaudeSettings bounds a settings file.
const maxClaudeSettings = 1 << 20

// ClaudeUserSettings is Claude Code's user settings file.
func (p Paths) ClaudeUserSettings() string { return filepath.Join(p.claudeDir(), "settings.json") }

// ClaudeJSON is Claude Code's own state file, which holds the user's MCP
// servers and each project's: ~/.claude.json (inside $CLAUDE_CONFIG_DIR
// when set).
func (p Paths) ClaudeJSON() string {
	if p.ClaudeConfigDir != "" {
		return filepath.Join(p.ClaudeConfigDir, ".claude.json")
	}
	return filepath.Join(p.Home, ".claude.json")
}

func (p Paths) claudeDir() string {
	if p.ClaudeConfigDir != "" {
		return p.ClaudeConfigDir
	}
	return filepath.Join(p.Home, ".claude")
}

// ClaudeManagedFiles are the managed settings files, in the order read:
// managed-settings.json, then managed-settings.d/*.json by name.
func (p Paths) ClaudeManagedFiles() []string { return p.claudeManagedFiles(nil) }

// claudeManagedFiles returns ClaudeManagedFiles, recording in t the
// directory listed.
func (l *Loaded) claudeManagedFiles() []string { return l.Paths.claudeManagedFiles(l.trace) }

// claudeManagedFiles is ClaudeManagedFiles recording in t the directory
// listed.
func (p Paths) claudeManagedFiles(t *trace) []string {
	if p.ClaudeManagedDir == "" {
		return nil
	}
	out := []string{filepath.Join(p.ClaudeManagedDir, "managed-settings.json")}
	t.add(filepath.Join(p.ClaudeManagedDir, "managed-settings.d"))
	ents, _ := os.ReadDir(filepath.Join(p.ClaudeManagedDir, "managed-settings.d"))
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".json") {
			out = append(out, filepath.Join(p.ClaudeManagedDir, "managed-settings.d", e.Name()))
		}
	}
	return out
}

// ClaudeLocalSettings is Claude Code's local settings file, kept out of
// the repository by Claude Code, where its "don't ask again" answers go.
func (w Workspace) ClaudeLocalSettings() string {
	return filepath.Join(w.Root, ".claude", "settings.local.json")
}

// claudeKeysUsed are the top-level keys rein reads; hooks by package hook.
var claudeKeysUsed = []string{"$schema", "permissions", "env", "hooks",
	"enableAllProjectMcpServers", "enabledMcpjsonServers", "disabledMcpjsonServers"}

// ParseClaudeSettings reads a Claude Code settings document (strict JSON,
// as Claude Code reads it) of the given level, translating its rules with
// base. A document that is not a JSON object, or a key of the wrong type,
// is an error; a rule or key rein cannot apply is listed in Unmapped.
func ParseClaudeSettings(data []byte, scope ClaudeScope, base ClaudeRuleBase) (ClaudeFile, error) {
	f := ClaudeFile{Scope: scope}
	data = bytes.TrimPrefix(data, bom)
	if len(bytes.TrimSpace(data)) == 0 {
		return f, nil
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		return f, fmt.Errorf("not a valid settings file (strict JSON: an object, no comments or trailing commas): %v", jsonErr(err))
	}
	if top == nil {
		return f, errors.New("not a valid settings file: want a JSON object")
	}
	var unused []string
	for k := range top {
		if !slices.Contains(claudeKeysUsed, k) {
			unused = append(unused, k)
		}
	}
	if len(unused) > 0 {
		sort.Strings(unused)
		f.Unmapped = append(f.Unmapped, "keys rein does not use: "+strings.Join(unused, ", "))
	}
	if raw, ok := top["env"]; ok && !isJSONNull(raw) {
		if err := json.Unmarshal(raw, &f.Env); err != nil {
			return f, fmt.Errorf("env: want an object of variable names to strings, e.g. {\"NODE_ENV\": \"test\"}")
		}
		for k := range f.Env {
			if !envNameRE().MatchString(k) {
				return f, fmt.Errorf("env: %q is not a variable name (letters, digits and _, not starting with a digit)", k)
			}
		}
	}
	if raw, ok := top["permissions"]; ok && !isJSONNull(raw) {
		if err := f.permissions(raw, base); err != nil {
			return f, fmt.Errorf("permissions.%w", err)
		}
	}
	if err := f.mcpApproval(top); err != nil {
		return f, err
	}
	return f, nil
}

// mcpApproval reads enableAllProjectMcpServers, enabledMcpjsonServers and
// disabledMcpjsonServers.
func (f *ClaudeFile) mcpApproval(top map[string]json.RawMessage) error {
	if raw, ok := top["enableAllProjectMcpServers"]; ok && !isJSONNull(raw) {
		var b bool
		if err := json.Unmarshal(raw, &b); err != nil {
			return errors.New("enableAllProjectMcpServers: want true or false")
		}
		f.MCP.EnableAll = &b
	}
	for key, dst := range map[string]*[]string{"enabledMcpjsonServers": &f.MCP.Enabled, "disabledMcpjsonServers": &f.MCP.Disabled} {
		raw, ok := top[key]
		if !ok || isJSONNull(raw) {
			continue
		}
		var names []string
		if err := json.Unmarshal(raw, &names); err != nil {
			return fmt.Errorf("%s: want a list of server names, e.g. [\"github\"]", key)
		}
		if names == nil {
			names = []string{}
		}
		*dst = names
	}
	return nil
}

// permissions reads the permissions object.
func (f *ClaudeFile) permissions(raw json.RawMessage, base ClaudeRuleBase) error {
	var p map[string]json.RawMessage
	if err := json.Unmarshal(raw, &p); err != nil || p == nil {
		return errors.New("permissions: want an object with allow, ask, deny, defaultMode…")
	}
	src := permission.SourceUser
	if f.Scope.workspace() {
		src = permission.SourceWorkspace
	}
	var unknown []string
	for _, k := range slices.Sorted(maps.Keys(p)) {
		v := p[k]
		if isJSONNull(v) {
			continue
		}
		switch k {
		case "deny", "ask", "allow", "ignorePatterns":
			action := permission.Decision(k)
			if k == "ignorePatterns" { // the deprecated predecessor of deny
				action = permission.DecisionDeny
			}
			var list []string
			if err := json.Unmarshal(v, &list); err != nil {
				return fmt.Errorf("%s: want a list of rule strings, e.g. [\"Bash(npm run test *)\"]", k)
			}
			for _, text := range list {
				if k == "ignorePatterns" {
					text = "Read(" + text + ")"
				}
				rules, note, err := TranslateClaudeRule(action, text, base)
				if err != nil {
					f.Unmapped = append(f.Unmapped, fmt.Sprintf("%s rule %s not applied: %v", action, clip(text, 120), err))
					continue
				}
				for i := range rules {
					rules[i].Source = src
				}
				f.Rules = append(f.Rules, rules...)
				if note != "" {
					f.Notes = append(f.Notes, fmt.Sprintf("%s rule %s: %s", action, clip(text, 120), note))
				}
			}
		case "defaultMode":
			var m string
			if err := json.Unmarshal(v, &m); err != nil {
				return errors.New("defaultMode: want a string such as \"acceptEdits\"")
			}
			f.Mode = f.mode(m)
		case "additionalDirectories":
			var dirs []string
			if err := json.Unmarshal(v, &dirs); err != nil {
				return errors.New("additionalDirectories: want a list of paths")
			}
			if len(dirs) > 0 {
				f.Unmapped = append(f.Unmapped, fmt.Sprintf("permissions.additionalDirectories (%s) not applied: a rein run has one workspace root; files outside it ask (allow them with Read(//abs/path/**) or Edit(//abs/path/**) rules)",
					clip(strings.Join(dirs, ", "), 120)))
			}
		case "disableBypassPermissionsMode":
			var s string
			_ = json.Unmarshal(v, &s)
			f.DisableBypass = s == "disable"
		default:
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		f.Unmapped = append(f.Unmapped, "permissions keys rein does not use: "+strings.Join(unknown, ", "))
	}
	return nil
}

// mode maps a defaultMode onto rein's modes.
func (f *ClaudeFile) mode(m string) permission.Mode {
	switch m {
	case "", "default", "manual":
		return permission.ModeDefault
	case "acceptEdits", "plan", "bypassPermissions":
		mode, err := permission.ParseMode(m)
		if err == nil {
			return mode
		}
	case "dontAsk":
		f.Unmapped = append(f.Unmapped, "permissions.defaultMode dontAsk not applied: rein has no mode that denies whatever would ask; it keeps asking (use rein's read-only mode, or deny rules)")
		return ""
	case "auto":
		f.Unmapped = append(f.Unmapped, "permissions.defaultMode auto not applied: rein has no classifier mode")
		return ""
	}
	f.Unmapped = append(f.Unmapped, fmt.Sprintf("permissions.defaultMode %q not applied: unknown (Claude Code's modes: default, acceptEdits, plan, dontAsk, bypassPermissions)", clip(m, 40)))
	return ""
}

func isJSONNull(raw json.RawMessage) bool { return string(bytes.TrimSpace(raw)) == "null" }

// jsonErr says where a JSON error is without quoting the file.
func jsonErr(err error) string {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Sprintf("syntax error at byte %d", se.Offset)
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return "want a JSON object at the top"
	}
	return "not JSON"
}

// readClaudeSettings reads one settings file; a missing file is an
// empty one. A workspace's file must be a regular file inside the
// workspace: one a link takes elsewhere is not read (Unmapped says so).
// A file that is not a regular file, larger than 1 MiB or not valid is
// an error naming it: its deny rules cannot be known.
func readClaudeSettings(path string, scope ClaudeScope, base ClaudeRuleBase, root string) (ClaudeFile, error) {
	f := ClaudeFile{Scope: scope, Path: path}
	read := path
	if scope.workspace() {
		real, err := filepath.EvalSymlinks(path)
		if errors.Is(err, fs.ErrNotExist) {
			return f, nil
		}
		rootReal, rerr := filepath.EvalSymlinks(root)
		if err != nil || rerr != nil {
			return f, fmt.Errorf("%s: cannot read: %v", path, errors.Join(err, rerr))
		}
		if !within(real, rootReal) {
			f.Unmapped = append(f.Unmapped, "not read: "+errOutside.Error())
			return f, nil
		}
		read = real
	}
	data, err := readRegular(read, false, maxClaudeSettings)
	if errors.Is(err, fs.ErrNotExist) {
		return f, nil
	}
	if err != nil {
		return f, fmt.Errorf("%s: %w", path, err)
	}
	parsed, err := ParseClaudeSettings(data, scope, base)
	if err != nil {
		return f, fmt.Errorf("%s: Claude Code settings: %w", path, err)
	}
	parsed.Path = path
	return parsed, nil
}
