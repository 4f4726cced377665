package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/reinhq/rein/permission"
	"github.com/reinhq/rein/workspace"
)

// ccOptions are Claude Code's headless flags on rein run (SPEC COMPAT-1,
// CLI-1): scripts written for `claude -p` run unchanged. Each maps to a
// rein mechanism; the flags rein cannot map are refused by name
// ([ccUnsupported]), never ignored.
type ccOptions struct {
	outputFormat string // --output-format: text, json, stream-json
	inputFormat  string // --input-format: text, stream-json
	partial      bool   // --include-partial-messages
	print        bool   // --print: accepted; rein run always prints
	skipPerms    bool   // --dangerously-skip-permissions
	allowed      []string
	disallowed   []string
	settings     string
	addDirs      []string
	sessionID    string
	mcpConfig    []string // --mcp-config: files or JSON documents
	strictMCP    bool     // --strict-mcp-config

	// Set by prepareCC:
	base workspace.ClaudeRuleBase
	doc  *workspace.ClaudeFile // the --settings document, parsed
	mcp  []workspace.MCPConfig // the --mcp-config documents, read
}

// ccUnsupported are Claude Code's flags rein knows and cannot map, each
// with what to do instead: refused with that advice rather than run with
// a different meaning.
var ccUnsupported = []struct{ name, advice string }{
	{"tools", "hide tools with --disallowedTools (a bare tool name is not offered to the model)"},
	{"permission-prompt-tool", "allow what the run needs with --allowedTools; a headless rein run denies what would ask"},
	{"json-schema", "ask for the JSON in the prompt"},
	{"fork-session", "resume the session with --resume; rein continues the same session"},
	{"max-budget-usd", "set subagents.max_cost or a budget in .rein/settings.yaml"},
	{"fallback-model", "configure a profile (rein provider) and retry with --model"},
	{"system-prompt-file", "use --system-prompt \"$(cat FILE)\""},
	{"append-system-prompt-file", "use --append-system-prompt \"$(cat FILE)\""},
	{"setting-sources", "rein reads every Claude Code settings level; see `rein config show`"},
	{"agents", "define the agents in .claude/agents/*.md"},
	{"replay-user-messages", "the user messages are in the session: rein sessions show ID"},
	{"include-hook-events", "hook runs are in the session's audit records: rein sessions show ID"},
	{"allow-dangerously-skip-permissions", "use --dangerously-skip-permissions, or --permission-mode bypass"},
	{"bare", "rein has no bare mode"},
	{"plugin-dir", "rein does not load Claude Code plugins"},
}

// addCCFlags declares Claude Code's headless flags on rein run.
func addCCFlags(cmd *cobra.Command, o *runOptions) {
	f := cmd.Flags()
	c := &o.cc
	f.StringVar(&c.outputFormat, "output-format", "", "Claude Code's output: text, json (one result object) or stream-json (system/assistant/user/result lines); rein's own is --output")
	f.StringVar(&c.inputFormat, "input-format", "", "text, or stream-json: Claude Code's user messages, one JSON line each, on stdin (with --output-format stream-json)")
	f.BoolVar(&c.partial, "include-partial-messages", false, "with --output-format stream-json: stream_event lines as the reply streams")
	f.BoolVar(&c.print, "print", false, "Claude Code's -p/--print: accepted; rein run always prints")
	f.BoolVar(&c.skipPerms, "dangerously-skip-permissions", false, "Claude Code's name for --permission-mode bypass (refused in a workspace that is not trusted or that disables bypass)")
	f.StringArrayVar(&c.allowed, "allowedTools", nil, "Claude Code allow rules, space- or comma-separated: \"Bash(git log *)\" Read")
	f.StringArrayVar(&c.disallowed, "disallowedTools", nil, "Claude Code deny rules; a bare tool name also hides the tool")
	f.StringVar(&c.settings, "settings", "", "a Claude Code settings file, or its JSON: its permissions apply above every file but managed settings")
	f.StringArrayVar(&c.addDirs, "add-dir", nil, "let the run read this directory too (repeatable); edits there still ask")
	f.StringVar(&c.sessionID, "session-id", "", "start the session with this id (a UUID not in use)")
	f.StringArrayVar(&c.mcpConfig, "mcp-config", nil, "MCP servers for this run: a .mcp.json-format file or its JSON (repeatable); they win over configured servers of the same name")
	f.BoolVar(&c.strictMCP, "strict-mcp-config", false, "use only the MCP servers of --mcp-config")
	for _, u := range ccUnsupported {
		f.StringArray(u.name, nil, "Claude Code's; not supported by rein: "+u.advice)
		f.Lookup(u.name).Hidden = true
	}
	for _, name := range []string{"fork-session", "replay-user-messages", "include-hook-events", "allow-dangerously-skip-permissions", "bare"} {
		f.Lookup(name).NoOptDefVal = "true" // booleans in Claude Code
	}
	f.Lookup("print").Hidden = true
	// -p alone, as in `claude -p --output-format json "…"`, leaves the
	// prompt to the argument or stdin; -p=TEXT still gives it.
	p := f.Lookup("prompt")
	p.NoOptDefVal = "-"
	p.Usage = "Claude Code's -p/--print: the prompt is the argument, or stdin; -p=TEXT gives it here"
}

// on reports whether Claude Code's output shapes are asked for.
func (c *ccOptions) on() bool { return c.outputFormat == "json" || c.outputFormat == "stream-json" }

// checkCC validates the Claude Code flags against each other and rein's own:
// a bad combination is a usage error saying what to change.
func (o *runOptions) checkCC(f *pflag.FlagSet) error {
	c := &o.cc
	for _, u := range ccUnsupported {
		if f.Changed(u.name) {
			return usageErrorf("--%s (Claude Code) is not supported by rein: %s", u.name, u.advice)
		}
	}
	if c.on() && f.Changed("dry-run") {
		return usageErrorf("--dry-run writes rein's report: use --output json with it, not --output-format")
	}
	switch c.outputFormat {
	case "", "text", "json", "stream-json":
	default:
		return usageErrorf("--output-format %q: want text, json or stream-json", c.outputFormat)
	}
	if c.outputFormat != "" && f.Changed("output") {
		return usageErrorf("--output-format and --output exclude each other: --output-format gives Claude Code's shapes, --output rein's")
	}
	if c.outputFormat == "text" {
		o.output = "text"
	}
	switch c.inputFormat {
	case "", "text":
	case "stream-json":
		if c.outputFormat != "stream-json" {
			return usageErrorf("--input-format stream-json needs --output-format stream-json")
		}
	default:
		return usageErrorf("--input-format %q: want text or stream-json", c.inputFormat)
	}
	if c.partial && c.outputFormat != "stream-json" {
		return usageErrorf("--include-partial-messages needs --output-format stream-json")
	}
	if c.skipPerms && f.Changed("permission-mode") {
		if m, err := permission.ParseMode(o.permissionMode); err != nil || m != permission.ModeBypass {
			return usageErrorf("--dangerously-skip-permissions and --permission-mode %s contradict each other: give one", o.permissionMode)
		}
	}
	if c.sessionID != "" {
		if !validUUID(c.sessionID) {
			return usageErrorf("--session-id %q: want a UUID such as 123e4567-e89b-12d3-a456-426614174000", c.sessionID)
		}
		if o.resume != "" || o.cont {
			return usageErrorf("--session-id names a new session: not with --resume or --continue")
		}
	}
	if o.server != "" {
		for _, name := range []string{"dangerously-skip-permissions", "allowedTools", "disallowedTools", "settings", "add-dir", "session-id", "input-format", "mcp-config", "strict-mcp-config"} {
			if f.Changed(name) {
				return usageErrorf("--%s: not with --server (the server's settings decide it)", name)
			}
		}
		if c.on() {
			return usageErrorf("--output-format %s: not with --server; use --output %s for rein's shapes", c.outputFormat, c.outputFormat)
		}
	}
	return nil
}

// validUUID reports s in the 8-4-4-4-12 hex form Claude Code requires of
// --session-id.
func validUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
				return false
			}
		}
	}
	return true
}

// maxCCSettings bounds --settings, as Claude Code does (2 MiB).
const maxCCSettings = 2 << 20

// prepareCC resolves what the Claude Code flags need before the engine is
// built: the base of their rules (the workspace of --cwd), the --settings
// document, the --add-dir directories. Notes about what a document holds
// that rein does not apply go to notice.
func (a *App) prepareCC(o *runOptions, notice io.Writer) error {
	c := &o.cc
	dir := a.abs(o.cwd)
	paths := workspace.PathsFrom(a.getenv)
	root := workspace.FindWorkspace(dir, paths.Home).Root
	c.base = workspace.ClaudeRuleBase{Root: root, Source: root, Home: paths.Home}
	for i, d := range c.addDirs {
		abs := d
		if !filepath.IsAbs(abs) {
			abs = filepath.Join(dir, d)
		}
		fi, err := os.Stat(abs)
		if err != nil || !fi.IsDir() {
			return usageErrorf("--add-dir %s: not a directory", d)
		}
		c.addDirs[i] = filepath.Clean(abs)
	}
	for _, arg := range c.mcpConfig {
		data, source, err := readDocArg("--mcp-config", arg, dir)
		if err != nil {
			return err
		}
		c.mcp = append(c.mcp, workspace.MCPConfig{Source: source, Data: data})
	}
	if c.settings == "" {
		return nil
	}
	data, source, err := readDocArg("--settings", c.settings, dir)
	if err != nil {
		return err
	}
	base := c.base
	if source != "--settings" {
		base.Source = filepath.Dir(source)
	}
	f, err := workspace.ParseClaudeSettings(data, workspace.ClaudeUser, base)
	if err != nil {
		return usageErrorf("--settings: %v", err)
	}
	var top map[string]json.RawMessage
	_ = json.Unmarshal(bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")), &top) // parsed above
	for _, key := range []string{"env", "hooks"} {
		if _, ok := top[key]; ok {
			f.Unmapped = append(f.Unmapped, fmt.Sprintf("%s not applied from --settings: put it in .claude/settings.local.json (the workspace's) or ~/.claude/settings.json", key))
		}
	}
	for _, line := range append(f.Unmapped, f.Notes...) {
		fmt.Fprintf(notice, "rein: --settings: %s\n", line)
	}
	c.doc = &f
	return nil
}

// readDocArg reads the JSON document a flag (--settings, --mcp-config)
// gives as its value: the JSON itself when it begins with "{", else a
// file, relative to dir, of at most 2 MiB. source is the file's path, or
// the flag's name for inline JSON.
func readDocArg(flag, arg, dir string) (data []byte, source string, err error) {
	if t := bytes.TrimSpace([]byte(arg)); len(t) > 0 && t[0] == '{' {
		if len(arg) > maxCCSettings {
			return nil, "", usageErrorf("%s: %d bytes of JSON, more than 2 MiB", flag, len(arg))
		}
		return []byte(arg), flag, nil
	}
	p := arg
	if !filepath.IsAbs(p) {
		p = filepath.Join(dir, p)
	}
	fi, err := os.Stat(p)
	switch {
	case err != nil:
		return nil, "", usageErrorf("%s %s: %v (give a file or its JSON object)", flag, arg, err)
	case !fi.Mode().IsRegular():
		return nil, "", usageErrorf("%s %s: not a regular file", flag, arg)
	case fi.Size() > maxCCSettings:
		return nil, "", usageErrorf("%s %s: %d bytes, more than the 2 MiB such a file may hold", flag, arg, fi.Size())
	}
	if data, err = os.ReadFile(p); err != nil {
		return nil, "", usageErrorf("%s %s: %v", flag, arg, err)
	}
	return data, p, nil
}

// ccRules returns the run-level rules of --allowedTools, --disallowedTools,
// --add-dir and --settings, translated from Claude Code's syntax (SPEC
// COMPAT-1); hidden lists the tools a bare deny names.
func (c *ccOptions) ccRules() (rules []permission.Rule, hidden []string, err error) {
	add := func(action permission.Decision, text string) error {
		rs, _, err := workspace.TranslateClaudeRule(action, text, c.base)
		if err != nil {
			return usageErrorf("rule %q: %v", text, err)
		}
		for _, r := range rs {
			r.Source = permission.SourceRun
			rules = append(rules, r)
			if action == permission.DecisionDeny && r.Pattern == "" && !strings.Contains(r.Tool, "*") {
				hidden = append(hidden, r.Tools()...)
			}
		}
		return nil
	}
	for _, l := range []struct {
		action permission.Decision
		specs  []string
	}{{permission.DecisionAllow, c.allowed}, {permission.DecisionDeny, c.disallowed}} {
		for _, spec := range l.specs {
			for _, text := range splitRules(spec) {
				if err := add(l.action, text); err != nil {
					return nil, nil, err
				}
			}
		}
	}
	for _, d := range c.addDirs {
		if err := add(permission.DecisionAllow, "Read(/"+filepath.ToSlash(d)+"/**)"); err != nil {
			return nil, nil, err
		}
	}
	if f := c.doc; f != nil {
		for _, r := range f.Rules {
			r.Source = permission.SourceRun
			rules = append(rules, r)
		}
	}
	return rules, hidden, nil
}

// ccMode returns the permission mode the Claude Code flags set, "" for
// none: --dangerously-skip-permissions, else --settings' defaultMode.
func (c *ccOptions) ccMode() string {
	switch {
	case c.skipPerms:
		return string(permission.ModeBypass)
	case c.doc != nil && c.doc.Mode != "":
		return string(c.doc.Mode)
	}
	return ""
}

// guardBypass refuses --dangerously-skip-permissions where rein's bypass
// must not run: a Claude Code settings file (or --settings) disables
// bypass (permissions.disableBypassPermissionsMode), or the workspace
// brings hooks, MCP servers, tools or rules the user has not trusted, or
// changed since (SPEC PERM-5). The same goes for bypass from --settings.
func (c *ccOptions) guardBypass(l *workspace.Loaded) error {
	if c.ccMode() != string(permission.ModeBypass) {
		return nil
	}
	what := "--dangerously-skip-permissions"
	if !c.skipPerms {
		what = "--settings' defaultMode bypassPermissions"
	}
	for _, f := range l.Claude {
		if f.DisableBypass {
			return usageErrorf("%s: refused, %s sets permissions.disableBypassPermissionsMode", what, f.Path)
		}
	}
	if c.doc != nil && c.doc.DisableBypass {
		return usageErrorf("%s: refused, --settings sets permissions.disableBypassPermissionsMode", what)
	}
	t := l.Trust
	switch {
	case t.Lost:
		return usageErrorf("%s: refused, the workspace %s changed since you trusted it (%s); review it, then run `rein trust`",
			what, l.Workspace.Root, strings.Join(t.Changed, ", "))
	case !t.Trusted && len(t.Extras) > 0:
		return usageErrorf("%s: refused in a workspace you have not trusted that brings its own configuration (%s); review it, then run `rein trust`",
			what, extraNames(t.Extras))
	}
	return nil
}

// extraNames lists a workspace's extras in one line.
func extraNames(extras []workspace.Extra) string {
	names := make([]string, 0, len(extras))
	for _, e := range extras {
		names = append(names, e.Kind+" "+e.What+" ("+e.File+")")
	}
	return strings.Join(names, ", ")
}
