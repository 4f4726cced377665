package workspace

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"sync"

	"github.com/reinhq/rein/permission"
)

// This file translates Claude Code's permission rules (settings.json
// `permissions.allow|ask|deny`) into rein's (SPEC COMPAT-1, PERM-2). Every
// rule either maps — to one or more [permission.Rule]s, with the same
// meaning or a stricter one for deny and ask — or is refused with an error
// saying why and what to write instead; a refused rule is never dropped
// silently: [Loaded.Warnings] and `rein doctor` list it.

// ClaudeRuleBase says what the paths of a Claude Code rule are relative to.
type ClaudeRuleBase struct {
	// Root is the workspace root, standing for Claude Code's working
	// directory: `./x` and `x/y` are relative to it.
	Root string
	// Source is the directory `/x` is relative to: the project root for a
	// project's files, Claude Code's config directory (~/.claude) for the
	// user's, the managed file's directory for managed settings.
	Source string
	// Home is the user's home directory, for `~/x`.
	Home string
}

// maxClaudeRule bounds the length of one rule.
const maxClaudeRule = 4096

// claudeParamRE matches a parameter rule's specifier (`run_in_background:true`,
// `model:opus`): a top-level input field, a colon, a value.
var claudeParamRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^(run_in_background|timeout|description|dangerouslyDisableSandbox|model|isolation|subagent_type|prompt|name|mode|team_name|background)\s*:`)
})

// TranslateClaudeRule maps one Claude Code rule of the given action onto
// rein's rules. note, when not empty, says how the meaning differs (a
// `Write(path)` applied as `Edit(path)`); an error says why the rule
// cannot be mapped. Forms:
//
//	Bash, Bash(*)                 every command
//	Bash(npm run test:*)          legacy prefix, the same as
//	Bash(npm run test *)          a prefix with a word boundary
//	Bash(npm run build)           an exact command
//	Read(./x) Read(x/**) Read(x)  paths: ./ from the workspace, a bare name at any depth
//	Read(//abs) Read(~/x) Read(/x) absolute, home, relative to the settings' source
//	Edit(...) Write(...)          edits (a Read deny also denies edits; an Edit allow also reads)
//	WebFetch(domain:example.com)  a host (`*.example.com` for its subdomains)
//	mcp__server, mcp__server__*, mcp__server__tool
//	Agent, Task                   the task tool (sub-agents)
//
// A `*` inside a command (`Bash(git * main)`, `Bash(ls*)`) maps in deny and
// ask rules (a glob over the command's words), not in allow rules. Not
// mapped: parameter rules (`Agent(model:opus)`), sub-agent names (`Agent(Explore)`),
// `Skill(...)`, `Cd(...)`, PowerShell, and tools rein does not have.
func TranslateClaudeRule(action permission.Decision, text string, base ClaudeRuleBase) (rules []permission.Rule, note string, err error) {
	text = strings.TrimSpace(text)
	if len(text) > maxClaudeRule {
		return nil, "", fmt.Errorf("longer than %d bytes", maxClaudeRule)
	}
	name, spec, hasSpec := text, "", false
	if i := strings.IndexByte(text, '('); i >= 0 {
		if !strings.HasSuffix(text, ")") {
			return nil, "", fmt.Errorf("missing closing parenthesis; write Tool(specifier)")
		}
		name, spec, hasSpec = strings.TrimSpace(text[:i]), strings.TrimSpace(text[i+1:len(text)-1]), true
	}
	if name == "" {
		return nil, "", fmt.Errorf("missing tool name")
	}
	if hasSpec && spec == "" {
		return nil, "", fmt.Errorf("empty specifier; write %s alone to match every call", name)
	}
	if hasSpec && claudeParamRE().MatchString(spec) {
		return nil, "", fmt.Errorf("a rule on an input parameter (%s) has no rein equivalent", spec)
	}
	if strings.HasPrefix(name, "mcp__") || strings.Contains(name, "*") {
		return claudeToolGlob(action, name, hasSpec)
	}
	switch name {
	case "Bash":
		return claudeBash(action, spec)
	case "PowerShell":
		return nil, "", fmt.Errorf("rein has no PowerShell tool; its shell tool is bash (write a Bash rule)")
	case "Read", "Edit", "Write", "MultiEdit", "NotebookEdit", "Glob", "Grep", "LS":
		return claudeFileRule(action, name, spec, hasSpec, base)
	case "WebFetch":
		return claudeWebFetch(action, spec, hasSpec)
	case "Agent", "Task":
		if hasSpec {
			return nil, "", fmt.Errorf("rein's rules cannot name a sub-agent (%s); deny the sub-agent tool with %s alone, or leave the agent out of the workspace", spec, name)
		}
		return parsed(action, "Task")
	case "WebSearch", "TodoWrite":
		if hasSpec {
			return nil, "", fmt.Errorf("%s takes no specifier; write %s alone", name, name)
		}
		return parsed(action, name)
	case "Skill", "Cd":
		return nil, "", fmt.Errorf("rein's rules cannot name a %s's argument; rein has no such rule", name)
	}
	if first := name[0]; first >= 'A' && first <= 'Z' {
		return nil, "", fmt.Errorf("rein has no tool %s (Claude Code's tools rein has: Bash, Read, Edit, Write, MultiEdit, Glob, Grep, LS, WebFetch, WebSearch, TodoWrite, Agent/Task, mcp__…)", name)
	}
	// A rein tool name written into Claude Code's settings (read_file(src/**)).
	return parsed(action, text)
}

// parsed reads a rule in rein's syntax.
func parsed(action permission.Decision, text string) ([]permission.Rule, string, error) {
	r, err := permission.ParseRule(action, text)
	if err != nil {
		return nil, "", fmt.Errorf("%s", strings.TrimPrefix(err.Error(), "permission: "))
	}
	return []permission.Rule{r}, "", nil
}

// claudeToolGlob maps rules on MCP tools and tool-name wildcards: `mcp__s`
// is every tool of server s; an allow rule's wildcard must follow a
// literal `mcp__<server>__`, as in Claude Code, which skips the others.
func claudeToolGlob(action permission.Decision, name string, hasSpec bool) ([]permission.Rule, string, error) {
	if hasSpec {
		return nil, "", fmt.Errorf("a rule on an MCP tool's input has no rein equivalent; name the tool alone")
	}
	if rest, ok := strings.CutPrefix(name, "mcp__"); ok && rest != "" && !strings.Contains(rest, "__") && !strings.Contains(rest, "*") {
		name += "__*" // mcp__server: every tool of the server
	}
	if action == permission.DecisionAllow {
		if i := strings.IndexByte(name, '*'); i >= 0 {
			pre := name[:i]
			rest, ok := strings.CutPrefix(pre, "mcp__")
			if !ok || !strings.Contains(rest, "__") || strings.HasPrefix(rest, "__") {
				return nil, "", fmt.Errorf("an allow rule may use * only after mcp__<server>__ (Claude Code skips it too)")
			}
		}
	}
	return parsed(action, name)
}

// claudeBash maps a Bash rule: rein matches an exact command or a prefix
// of words (`x:*`, `x *`), not a * elsewhere.
func claudeBash(action permission.Decision, spec string) ([]permission.Rule, string, error) {
	if spec == "" || spec == "*" {
		return parsed(action, "Bash")
	}
	p := spec
	if s, ok := strings.CutSuffix(p, ":*"); ok {
		p = s + ":*"
	} else if s, ok := strings.CutSuffix(p, " *"); ok {
		p = strings.TrimSpace(s) + ":*"
	}
	if strings.Contains(strings.TrimSuffix(p, ":*"), "*") {
		if action != permission.DecisionAllow { // a glob over the words, as Claude Code matches it
			return parsed(action, "Bash("+spec+")")
		}
		return nil, "", fmt.Errorf("rein's allow rules match a command exactly or by its leading words (`git diff *`, `git diff:*`), not with * elsewhere; rewrite it as a prefix rule or list the commands")
	}
	if strings.TrimSuffix(p, ":*") == "" {
		return parsed(action, "Bash")
	}
	return parsed(action, "Bash("+p+")")
}

// claudeFileRule maps a file rule. Claude Code consults path rules only as
// Read and Edit: Glob, Grep and LS are applied as Read, Write, MultiEdit
// and NotebookEdit as Edit. A Read deny or ask also covers edits of the
// path, and an Edit allow also reads it, as in Claude Code.
func claudeFileRule(action permission.Decision, name, spec string, hasSpec bool, base ClaudeRuleBase) ([]permission.Rule, string, error) {
	family, note := name, ""
	switch name {
	case "Glob", "Grep", "LS":
		family = "Read"
	case "Write", "MultiEdit", "NotebookEdit":
		family = "Edit"
	}
	if !hasSpec {
		if name == "NotebookEdit" {
			return nil, "", fmt.Errorf("rein has no notebook tool; nothing to allow or deny")
		}
		rules, _, err := parsed(action, name)
		if err != nil {
			return nil, "", err
		}
		return withCompanion(action, name, "", rules)
	}
	if family != name {
		note = fmt.Sprintf("Claude Code consults path rules only as Read and Edit; rein applies %s(%s) as %s(%s)", name, spec, family, spec)
	}
	glob, err := claudePath(spec, base)
	if err != nil {
		return nil, "", err
	}
	if glob == "**" { // every path: the rule on the whole tool
		rules, _, err := parsed(action, family)
		if err != nil {
			return nil, "", err
		}
		rules, _, err = withCompanion(action, family, "", rules)
		return rules, note, err
	}
	rules, _, err := parsed(action, family+"("+glob+")")
	if err != nil {
		return nil, "", err
	}
	rules, _, err = withCompanion(action, family, glob, rules)
	return rules, note, err
}

// withCompanion adds the rule Claude Code implies: an Edit rule for a Read
// deny or ask, a Read rule for an Edit allow.
func withCompanion(action permission.Decision, family, glob string, rules []permission.Rule) ([]permission.Rule, string, error) {
	other := ""
	switch {
	case family == "Read" && action != permission.DecisionAllow:
		other = "Edit"
	case family == "Edit" && action == permission.DecisionAllow:
		other = "Read"
	}
	if other == "" {
		return rules, "", nil
	}
	text := other
	if glob != "" {
		text += "(" + glob + ")"
	}
	more, _, err := parsed(action, text)
	if err != nil {
		return nil, "", err
	}
	return append(rules, more...), "", nil
}

// claudePath turns a Claude Code path pattern (gitignore syntax) into
// rein's glob: `//x` absolute, `~/x` in the home directory, `/x` from the
// settings' source, `./x` from the workspace root; `x/y` stays relative to
// the workspace (deny and ask rules match it at any depth too); a bare
// name (no slash) matches at any depth; a trailing / matches below.
func claudePath(spec string, base ClaudeRuleBase) (string, error) {
	p := filepath.ToSlash(spec)
	if strings.ContainsRune(p, 0) {
		return "", fmt.Errorf("a NUL byte in the path")
	}
	if strings.HasSuffix(p, "/") {
		p += "**"
	}
	abs := func(dir, rest string) (string, error) {
		if dir == "" {
			return "", fmt.Errorf("%s: no directory to resolve it from", spec)
		}
		return globEscape(filepath.ToSlash(filepath.Clean(dir))) + "/" + strings.TrimLeft(rest, "/"), nil
	}
	switch {
	case p == "*" || p == "**" || p == "./**" || p == "./*":
		if p == "./*" {
			return abs(base.Root, "*")
		}
		return "**", nil
	case strings.HasPrefix(p, "//"):
		return "/" + strings.TrimLeft(p, "/"), nil
	case p == "~" || strings.HasPrefix(p, "~/"):
		return abs(base.Home, strings.TrimPrefix(p, "~"))
	case strings.HasPrefix(p, "~"):
		return "", fmt.Errorf("%s: ~user paths are not supported; write //home/user/… or ~/…", spec)
	case strings.HasPrefix(p, "/"):
		return abs(base.Source, p)
	case strings.HasPrefix(p, "./"):
		return abs(base.Root, strings.TrimPrefix(p, "./"))
	case !strings.Contains(p, "/"):
		return "**/" + p, nil
	}
	return p, nil
}

// globEscape escapes the characters doublestar reads as pattern syntax,
// so a directory's name matches literally.
func globEscape(s string) string {
	var b strings.Builder
	for _, c := range s {
		if strings.ContainsRune(`*?[]{}\`, c) {
			b.WriteByte('\\')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// claudeWebFetch maps WebFetch(domain:host).
func claudeWebFetch(action permission.Decision, spec string, hasSpec bool) ([]permission.Rule, string, error) {
	if !hasSpec {
		return parsed(action, "WebFetch")
	}
	d, ok := strings.CutPrefix(spec, "domain:")
	if !ok {
		return nil, "", fmt.Errorf("rein matches WebFetch by host only; write WebFetch(domain:example.com)")
	}
	d = strings.TrimSuffix(strings.ToLower(strings.TrimSpace(d)), ".")
	if d == "*" {
		return parsed(action, "WebFetch")
	}
	if strings.Contains(strings.TrimPrefix(d, "*."), "*") {
		return nil, "", fmt.Errorf("rein matches a domain exactly or with a leading *. (all subdomains), not a * elsewhere")
	}
	rules, _, err := parsed(action, "WebFetch(domain:"+d+")")
	note := ""
	if err == nil && strings.HasPrefix(d, "*.") && action == permission.DecisionAllow {
		note = "rein's " + d + " also matches " + strings.TrimPrefix(d, "*.") + " itself"
	}
	return rules, note, err
}
