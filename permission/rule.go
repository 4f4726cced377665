package permission

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/reinhq/rein/tool"
)

// Source is the settings layer a rule comes from. Layers only matter for
// audit and display: deny wins whatever its layer.
type Source string

// The rule sources, from the widest to the narrowest.
const (
	SourceUser      Source = "user"      // ~/.rein/settings.yaml
	SourceWorkspace Source = "workspace" // <workspace>/.rein/settings.yaml
	SourceRun       Source = "run"       // flags and API options of one run
	SourceSession   Source = "session"   // "always" answers given during a session
	// SourceCaller marks the rules a server's caller kept with "always"
	// answers in earlier runs (SPEC API-9): they apply to that caller's
	// runs in that directory only.
	SourceCaller Source = "caller"
)

// Rule allows, asks about or denies calls of a tool, optionally only those
// whose argument matches Pattern (SPEC PERM-2).
//
// Pattern depends on the tool: for bash it is a command, exact (`git status`)
// or a prefix of words (`git diff:*`), or — in deny and ask rules only — a
// glob over the words (`git * main`: see shellglob.go); `domain:host` matches a URL input's
// host; anything else is a doublestar path glob, absolute (`/etc/**`, `~/x`)
// or relative to the workspace (`src/**`). An empty Pattern matches every call
// of the tool. Tool may hold `*` wildcards (`mcp__github__*`), or be a Claude
// Code name standing for several tools (Edit, Read: see
// [tool.ClaudeRuleTools]).
//
// Tool [ActionRuleTool] makes a rule on workspace actions (SPEC ACTION-1):
// `Action(deploy)` matches the calls of the action named deploy, and only
// of an action (Request.Origin is [tool.OriginAction]): not a built-in or an
// MCP tool of that name. Its Pattern is the action's name and may hold `*`
// wildcards (`Action(deploy_*)`, `Action(*)`); a bare `Action` matches every
// action.
type Rule struct {
	Action  Decision `json:"action" yaml:"action"`
	Tool    string   `json:"tool" yaml:"tool"`
	Pattern string   `json:"pattern,omitempty" yaml:"pattern,omitempty"`
	Source  Source   `json:"source,omitempty" yaml:"source,omitempty"`
}

// Tools returns the names of the tools the rule applies to: the rein tools
// a Claude Code name stands for (Edit: edit_file, multi_edit, write_file),
// else Tool itself, wildcards included.
func (r Rule) Tools() []string {
	if names := tool.ClaudeRuleTools(r.Tool); names != nil {
		return names
	}
	return []string{r.Tool}
}

// ActionRuleTool is the Tool of a rule on workspace actions:
// `Action(name)`.
const ActionRuleTool = "Action"

// IsAction reports a rule on workspace actions (`Action(name)`).
func (r Rule) IsAction() bool { return r.Tool == ActionRuleTool }

// String returns the rule in the syntax [ParseRule] reads, without its action.
func (r Rule) String() string {
	if r.Pattern == "" {
		return r.Tool
	}
	return r.Tool + "(" + r.Pattern + ")"
}

// shellTools are the tools whose input "command" is a shell command.
var shellTools = map[string]bool{"bash": true, "shell": true}

// shellRule reports a rule tool name that stands for shell tools only
// (bash, or Claude Code's Bash).
func shellRule(name string) bool {
	if shellTools[name] {
		return true
	}
	names := tool.ClaudeRuleTools(name)
	for _, n := range names {
		if !shellTools[n] {
			return false
		}
	}
	return len(names) > 0
}

// ParseRule reads a rule such as `bash(git diff:*)`, `read_file(src/**)`,
// `web_fetch(domain:example.com)`, `bash`, `mcp__github__*` or
// `Action(deploy)` (any case of "action" before a parenthesis reads as
// [ActionRuleTool]; a bare `Action` is every action). Claude Code's
// tool names are read as in Claude Code (see [tool.ClaudeRuleTools]): one
// that stands for a single rein tool is replaced by it (Bash → bash, Write →
// write_file); Edit and Read are kept and match every tool that edits
// (edit_file, multi_edit, write_file) or reads (read_file, glob, grep,
// list_dir) files.
func ParseRule(action Decision, s string) (Rule, error) {
	act, err := parseDecision(string(action))
	if err != nil {
		return Rule{}, err
	}
	s = strings.TrimSpace(s)
	name, pattern := s, ""
	if i := strings.IndexByte(s, '('); i >= 0 {
		if !strings.HasSuffix(s, ")") {
			return Rule{}, fmt.Errorf("permission: rule %q: missing closing parenthesis; write tool(pattern)", s)
		}
		name, pattern = strings.TrimSpace(s[:i]), strings.TrimSpace(s[i+1:len(s)-1])
		if pattern == "" {
			return Rule{}, fmt.Errorf("permission: rule %q: empty pattern; write %q to match every call of the tool", s, name)
		}
	}
	if err := checkToolName(name); err != nil {
		return Rule{}, fmt.Errorf("permission: rule %q: %w", s, err)
	}
	if pattern != "" && strings.EqualFold(name, ActionRuleTool) {
		name = ActionRuleTool
	}
	if names := tool.ClaudeRuleTools(name); len(names) == 1 {
		name = names[0]
	}
	r := Rule{Action: act, Tool: name, Pattern: pattern}
	if _, err := compileRule(r); err != nil {
		return Rule{}, err
	}
	return r, nil
}

// checkToolName accepts letters, digits, '_', '-', '.' and the '*' wildcard.
func checkToolName(name string) error {
	if name == "" {
		return fmt.Errorf("missing tool name")
	}
	for _, c := range name {
		ok := c == '_' || c == '-' || c == '.' || c == '*' ||
			(c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
		if !ok {
			return fmt.Errorf("tool name %q has %q; use letters, digits, _ - . and the * wildcard", name, c)
		}
	}
	return nil
}

// patternKind says how a rule's pattern is matched.
type patternKind int

const (
	kindAny    patternKind = iota // no pattern: every call of the tool
	kindShell                     // command words
	kindDomain                    // URL host
	kindPath                      // path glob
)

// compiled is a rule ready to match.
type compiled struct {
	rule   Rule
	kind   patternKind
	shell  shellPattern
	domain string
	glob   string // path glob, ~ expanded, slash-separated
	abs    bool   // glob is absolute
	// action: an `Action(name)` rule, matching the actions actionName (a
	// path.Match pattern) covers.
	action     bool
	actionName string
}

// compileRule checks a rule and prepares it for matching.
func compileRule(r Rule) (compiled, error) {
	c := compiled{rule: r}
	if _, err := path.Match(r.Tool, ""); err != nil {
		return c, fmt.Errorf("permission: rule %q: bad tool pattern: %v", r, err)
	}
	if r.IsAction() {
		return compileAction(r)
	}
	p := r.Pattern
	switch {
	case p == "" || (p == "*" && !shellRule(r.Tool)) || (p == "**" && !shellRule(r.Tool)):
		c.kind = kindAny
	case strings.Contains(r.Tool, "*"):
		return c, fmt.Errorf("permission: rule %q: a pattern needs an exact tool name, not %q", r, r.Tool)
	case shellRule(r.Tool):
		sp, err := parseShellPattern(p)
		if err != nil {
			return c, fmt.Errorf("permission: rule %q: %w", r, err)
		}
		if sp.glob != nil && r.Action == DecisionAllow {
			return c, fmt.Errorf("permission: rule %q: a * inside a command is read in deny and ask rules only; an allow rule names the command's leading words (`git diff:*`)", r)
		}
		c.kind, c.shell = kindShell, sp
	case strings.HasPrefix(p, "domain:"):
		d := strings.ToLower(strings.TrimSpace(strings.TrimPrefix(p, "domain:")))
		if d == "" || strings.ContainsAny(d, "/ \t:@?#") || strings.Contains(d[min(1, len(d)):], "*") {
			return c, fmt.Errorf("permission: rule %q: write domain:example.com or domain:*.example.com", r)
		}
		c.kind, c.domain = kindDomain, d
	default:
		g := expandHome(p)
		g = strings.TrimPrefix(filepath.ToSlash(g), "./")
		if !doublestar.ValidatePattern(g) {
			return c, fmt.Errorf("permission: rule %q: invalid path glob %q", r, p)
		}
		c.kind, c.glob, c.abs = kindPath, g, strings.HasPrefix(g, "/")
	}
	return c, nil
}

// compileAction prepares an `Action(name)` rule: it matches every call of
// the actions its name pattern covers.
func compileAction(r Rule) (compiled, error) {
	c := compiled{rule: r, kind: kindAny, action: true, actionName: r.Pattern}
	if c.actionName == "" {
		c.actionName = "*"
	}
	if err := checkToolName(c.actionName); err != nil {
		return c, fmt.Errorf("permission: rule %q: action %w", r, err)
	}
	if _, err := path.Match(c.actionName, ""); err != nil {
		return c, fmt.Errorf("permission: rule %q: bad action name pattern: %v", r, err)
	}
	return c, nil
}

// expandHome replaces a leading ~ with the user's home directory.
func expandHome(p string) string {
	if p != "~" && !strings.HasPrefix(p, "~/") {
		return p
	}
	home, err := os.UserHomeDir()
	if err != nil || home == "" {
		return p
	}
	return filepath.Join(home, p[1:])
}

// matchTool reports whether the rule names the tool of a request, directly,
// by a wildcard or by its Claude Code name. An `Action(name)` rule names
// workspace actions only, whatever other tool bears the name.
func (c *compiled) matchTool(req Request) bool {
	name := req.Tool
	if c.action {
		ok, _ := path.Match(c.actionName, name)
		return ok && req.Origin == tool.OriginAction
	}
	if c.rule.Tool == name {
		return true
	}
	if names := tool.ClaudeRuleTools(c.rule.Tool); names != nil {
		return slices.Contains(names, name)
	}
	ok, _ := path.Match(c.rule.Tool, name)
	return ok
}

// matchDomain reports whether host is the rule's domain; `*.example.com`
// matches example.com and its subdomains.
func (c *compiled) matchDomain(host string) bool {
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	if host == "" {
		return false
	}
	if rest, ok := strings.CutPrefix(c.domain, "*."); ok {
		return host == rest || strings.HasSuffix(host, "."+rest)
	}
	return host == c.domain
}

// matchPath reports whether the rule's glob matches the path. Absolute globs
// match the absolute path (as written and with symlinks resolved); relative
// ones the workspace-relative path. With anywhere set (deny and ask rules), a
// relative glob also matches anywhere below the root, so `secrets/**` denies
// a secrets directory outside the workspace too.
func (c *compiled) matchPath(p pathInfo, anywhere bool) bool {
	if c.abs {
		return globMatch(c.glob, p.abs) || globMatch(c.glob, p.real)
	}
	if p.rel != "" && globMatch(c.glob, p.rel) {
		return true
	}
	if p.realRel != "" && globMatch(c.glob, p.realRel) {
		return true
	}
	if anywhere {
		g := "**/" + c.glob
		return globMatch(g, strings.TrimPrefix(p.abs, "/")) || globMatch(g, strings.TrimPrefix(p.real, "/"))
	}
	return false
}

// globMatch is doublestar.Match on slash paths, false on a bad pattern.
func globMatch(pattern, name string) bool {
	if name == "" {
		return false
	}
	ok, err := doublestar.Match(pattern, filepath.ToSlash(name))
	return err == nil && ok
}
