package permission

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/reinhq/rein/internal/shellparse"
	"github.com/reinhq/rein/tool"
)

// Engine is the [Policy] of rein: modes, layered rules, the sensitive-file
// protection and the shell analysis. It is also a [RuleStore]: rules added
// while a session runs ("always" answers) apply at once and are passed on to
// the settings' Store. It is safe for concurrent use.
type Engine struct {
	mu         sync.RWMutex
	mode       Mode
	rules      []compiled
	sensitive  sensitiveSet
	askTimeout time.Duration
	store      RuleStore
	hidden     bool      // Settings.SensitiveHidden
	tenant     bool      // Settings.Tenant
	roots      *sync.Map // workspace directory → its symlinks resolved
}

var _ Policy = (*Engine)(nil)
var _ RuleStore = (*Engine)(nil)

// NewPolicy builds the policy of merged settings (see [Merge]). An empty mode
// is [ModeDefault]; a zero AskTimeout is [DefaultAskTimeout].
func NewPolicy(s Settings) (*Engine, error) {
	mode, err := ParseMode(string(s.Mode))
	if err != nil {
		return nil, err
	}
	e := &Engine{mode: mode, askTimeout: s.AskTimeout, store: s.Store, hidden: s.SensitiveHidden, tenant: s.Tenant, roots: &sync.Map{}}
	if e.askTimeout <= 0 {
		e.askTimeout = DefaultAskTimeout
	}
	for _, r := range s.Rules {
		c, err := compileRule(r)
		if err != nil {
			return nil, err
		}
		e.rules = append(e.rules, c)
	}
	e.sensitive = newSensitive(append(slices.Clone(DefaultSensitiveFiles), s.SensitiveFiles...))
	return e, nil
}

// Mode returns the current mode.
func (e *Engine) Mode() Mode {
	e.mu.RLock()
	defer e.mu.RUnlock()
	return e.mode
}

// SetMode switches mode for the calls decided from now on.
func (e *Engine) SetMode(m Mode) error {
	m, err := ParseMode(string(m))
	if err != nil {
		return err
	}
	e.mu.Lock()
	e.mode = m
	e.mu.Unlock()
	return nil
}

// AskTimeout is how long [Ask] should wait for an answer.
func (e *Engine) AskTimeout() time.Duration { return e.askTimeout }

// Rules returns the rules in force, the session's included.
func (e *Engine) Rules() []Rule {
	e.mu.RLock()
	defer e.mu.RUnlock()
	out := make([]Rule, len(e.rules))
	for i, c := range e.rules {
		out[i] = c.rule
	}
	return out
}

// Add makes a rule apply from now on (Source defaults to session) and passes
// it to the settings' Store, if any. A rule already present is not added
// twice.
func (e *Engine) Add(ctx context.Context, r Rule) error {
	if r.Source == "" {
		r.Source = SourceSession
	}
	c, err := compileRule(r)
	if err != nil {
		return err
	}
	e.mu.Lock()
	dup := slices.ContainsFunc(e.rules, func(x compiled) bool {
		return x.rule.Action == r.Action && x.rule.Tool == r.Tool && x.rule.Pattern == r.Pattern
	})
	if !dup {
		e.rules = append(e.rules, c)
	}
	store := e.store
	e.mu.Unlock()
	if dup || store == nil {
		return nil
	}
	if err := store.Add(ctx, r); err != nil {
		return fmt.Errorf("permission: keep rule %s: %w", r, err)
	}
	return nil
}

// Decide applies, in order: deny rules, built-in denies (plan mode's
// included), the plan approval (PERM-7), ask rules, built-in asks, allow
// rules (not in strict and plan mode), the mode's default (SPEC PERM-1,
// PERM-2).
func (e *Engine) Decide(ctx context.Context, req Request) (Outcome, error) {
	if err := ctx.Err(); err != nil {
		return Outcome{}, err
	}
	e.mu.RLock()
	d := decider{mode: e.mode, rules: e.rules, sensitive: e.sensitive, hidden: e.hidden, tenant: e.tenant}
	e.mu.RUnlock()
	f := gather(ctx, req, e.roots)
	d.f = &f
	if err := ctx.Err(); err != nil {
		return Outcome{}, err // the analysis was cut short
	}
	return d.decide(), nil
}

// facts is what the policy learns from a request's input.
type facts struct {
	req      Request
	ws       workspace
	paths    []pathInfo
	shell    *shellparse.Script // shell tools only
	shellErr error
	command  string
	host     string
	dirs     shellDirs           // where the command's relative paths lead
	vars     map[string][]string // variables the command sets statically
	wordMemo map[wordKey]wordPathsResult
	cmds     []*command
	words    int // words of the command, plus one once counted
}

// gather reads the paths, command and URL of a request.
func gather(ctx context.Context, req Request, roots *sync.Map) facts {
	f := facts{req: req, ws: newWorkspace(req.WorkDir, roots)}
	var in map[string]any
	_ = json.Unmarshal(req.Input, &in)
	for _, k := range []string{"path", "file_path"} {
		if s, ok := in[k].(string); ok && s != "" {
			f.paths = append(f.paths, f.ws.resolve(s))
		}
	}
	if len(f.paths) == 0 && (req.Tool == "glob" || req.Tool == "grep") {
		f.paths = append(f.paths, f.ws.resolve("."))
	}
	if pattern, ok := in["pattern"].(string); ok && req.Tool == "glob" {
		if p, ok := globBase(in, pattern); ok {
			f.paths = append(f.paths, f.ws.resolve(p))
		}
	}
	if shellTools[req.Tool] {
		f.command, _ = in["command"].(string)
		if strings.TrimSpace(f.command) == "" {
			f.shellErr = fmt.Errorf("no command")
		} else {
			f.shell, f.shellErr = shellparse.ParseContext(ctx, f.command)
		}
		f.dirs = shellDirs{dirs: []string{callDir(f.ws, in)}}
		if f.shell != nil {
			f.dirs, f.vars = scriptDirs(f.dirs.dirs[0], f.shell), scriptVars(f.shell)
		}
	}
	if s, ok := in["url"].(string); ok {
		if u, err := url.Parse(s); err == nil {
			f.host = u.Hostname()
		}
	}
	return f
}

// decider decides one request against a snapshot of the engine.
type decider struct {
	mode      Mode
	rules     []compiled
	sensitive sensitiveSet
	hidden    bool // the backend hides the workspace's sensitive files
	tenant    bool // a server caller's run (Settings.Tenant)
	f         *facts
}

func (d *decider) decide() Outcome {
	if o, ok := d.matchRules(DecisionDeny); ok {
		return o
	}
	if o, ok := d.builtinDeny(); ok {
		return o
	}
	if o, ok := d.planTool(); ok {
		return o
	}
	if o, ok := d.unsandboxed(); ok {
		return o
	}
	if o, ok := d.matchRules(DecisionAsk); ok {
		return o
	}
	if o, ok := d.dynamicAsk(); ok {
		return o
	}
	if o, ok := d.shellUnknown(); ok {
		return o
	}
	if o, ok := d.protectedAsk(); ok {
		return o
	}
	if o, ok := d.networkAsk(); ok {
		return o
	}
	if d.mode != ModeBypass && !d.wholeToolAllowed() {
		if o, ok := d.builtinAsk(); ok {
			return o
		}
	}
	if d.mode != ModeStrict && d.mode != ModePlan { // plan mode: rules never widen it (PERM-7)
		if o, ok := d.allowRules(); ok {
			return o
		}
	}
	return d.modeDefault()
}

// matchRules finds a deny or ask rule that matches any part of the call.
func (d *decider) matchRules(action Decision) (Outcome, bool) {
	for i := range d.rules {
		c := &d.rules[i]
		if c.rule.Action != action || !c.matchTool(d.f.req) || !d.matchesAny(c) {
			continue
		}
		verb := "denied"
		if action == DecisionAsk {
			verb = "needs confirmation"
		}
		r := c.rule
		return Outcome{Decision: action, Reason: fmt.Sprintf("%s %s by %s rule %s", d.f.req.Tool, verb, sourceName(r.Source), r), Rule: &r}, true
	}
	return Outcome{}, false
}

func sourceName(s Source) string {
	if s == "" {
		return "a"
	}
	return "the " + string(s)
}

// matchesAny reports whether a deny or ask rule matches any command, path or
// host of the call.
func (d *decider) matchesAny(c *compiled) bool {
	switch c.kind {
	case kindAny:
		return true
	case kindShell:
		for _, cmd := range d.f.shellCommands() {
			for _, v := range cmd.Variants() {
				if c.shell.match(v) {
					return true
				}
			}
		}
	case kindPath:
		for _, p := range d.f.paths {
			if c.matchPath(p, true) {
				return true
			}
		}
	case kindDomain:
		return c.matchDomain(d.f.host)
	}
	return false
}

// dynamicAsk: a command whose program name, or code hidden in a variable,
// is only known when it runs cannot be checked against the deny and ask
// rules of the shell tool; when there are any, it asks, in every mode.
func (d *decider) dynamicAsk() (Outcome, bool) {
	if d.f.shell == nil || d.f.shell.Dynamic == "" {
		return Outcome{}, false
	}
	for i := range d.rules {
		c := &d.rules[i]
		if c.rule.Action != DecisionAllow && c.kind == kindShell && c.matchTool(d.f.req) {
			r := c.rule
			return Outcome{Decision: DecisionAsk, Reason: fmt.Sprintf("%s, so the command cannot be checked against %s rule %s; it needs confirmation",
				d.f.shell.Dynamic, sourceName(r.Source), r), Rule: &r}, true
		}
	}
	return Outcome{}, false
}

// unsandboxed: a shell command that asks to run outside the sandbox
// (unsandboxed: true, SPEC TOOL-7) always needs confirmation — in every
// mode, bypass included, whatever the allow rules and "always" answers
// say — and is denied in read-only mode.
func (d *decider) unsandboxed() (Outcome, bool) {
	if !shellTools[d.f.req.Tool] {
		return Outcome{}, false
	}
	// Read as the tool reads its input (encoding/json: keys in any case,
	// the last of repeated keys), and anything but false or absent counts:
	// the policy must not allow unasked what the tool might run outside.
	var in struct {
		Unsandboxed any `json:"unsandboxed"`
	}
	if err := json.Unmarshal(d.f.req.Input, &in); err != nil {
		in.Unsandboxed = bytes.Contains(bytes.ToLower(d.f.req.Input), []byte("unsandboxed"))
	}
	if in.Unsandboxed == nil || in.Unsandboxed == false {
		return Outcome{}, false
	}
	if d.mode == ModeReadOnly || d.mode == ModePlan {
		return Outcome{Decision: DecisionDeny, Reason: d.f.req.Tool + " outside the sandbox is denied in " + string(d.mode) + " mode"}, true
	}
	return Outcome{Decision: DecisionAsk, Reason: d.f.req.Tool + " asks to run outside the sandbox: the user confirms every such command", UserOnly: true}, true
}

// wholeToolAllowed reports an allow rule for the whole tool, which also
// silences the built-in asks of the shell analysis.
func (d *decider) wholeToolAllowed() bool {
	if d.mode == ModeStrict || d.mode == ModePlan {
		return false
	}
	for i := range d.rules {
		c := &d.rules[i]
		if c.rule.Action == DecisionAllow && (c.kind == kindAny || c.shell.any) && c.matchTool(d.f.req) {
			return true
		}
	}
	return false
}

// builtinDeny: sensitive files in every mode; changes in read-only mode.
func (d *decider) builtinDeny() (Outcome, bool) {
	tool := d.f.req.Tool
	for _, p := range d.f.paths {
		if g, ok := d.sensitive.match(p); ok {
			return deny("%s on %s is denied: it is a sensitive file (matches %s) that rein never lets tools read or change", tool, p.shown(), g), true
		}
	}
	if o, ok := d.shellSensitive(); ok {
		return o, true
	}
	if o, ok := d.planDeny(); ok {
		return o, true
	}
	if d.mode != ModeReadOnly {
		return Outcome{}, false
	}
	if !readOnly(d.f.req.Meta) {
		return deny("read-only mode: %s can change things, so it is denied; the user can switch to default or accept-edits mode to allow it", tool), true
	}
	for _, p := range d.f.paths {
		if !p.inside() {
			return deny("read-only mode: %s is outside the workspace %s", p.abs, d.f.ws.dir), true
		}
	}
	return Outcome{}, false
}

func deny(format string, args ...any) Outcome {
	return Outcome{Decision: DecisionDeny, Reason: fmt.Sprintf(format, args...)}
}

func ask(format string, args ...any) Outcome {
	return Outcome{Decision: DecisionAsk, Reason: fmt.Sprintf(format, args...)}
}

// readOnly reports a tool that changes nothing.
func readOnly(m tool.Meta) bool { return m.ReadOnly || m.Category == tool.CategoryRead }

// builtinAsk covers what shell rules cannot see: commands that do not
// parse or whose code is hidden in variables, and redirections to files
// known only when the command runs or outside the workspace.
func (d *decider) builtinAsk() (Outcome, bool) {
	if !shellTools[d.f.req.Tool] {
		return Outcome{}, false
	}
	if d.f.shell == nil {
		return ask("cannot check the command (%v), so it needs confirmation", d.f.shellErr), true
	}
	if d.f.shell.Dynamic != "" {
		return ask("%s, so the command needs confirmation", d.f.shell.Dynamic), true
	}
	for _, r := range d.f.shell.Redirs {
		ps, known := d.f.wordPaths(r.Target)
		if !known {
			return ask("the command redirects to %q, which cannot be known before it runs", r.Target.Text), true
		}
		for _, p := range ps {
			if !harmlessDevice(p.abs) && !p.inside() {
				return ask("the command redirects to %s, outside the workspace", p.abs), true
			}
		}
	}
	return Outcome{}, false
}

// harmlessDevice reports device files every command may use; p is
// absolute and cleaned, so /dev/fd/../x is not one.
func harmlessDevice(p string) bool {
	switch p {
	case "/dev/null", "/dev/stdout", "/dev/stderr", "/dev/stdin", "/dev/tty", "/dev/zero":
		return true
	}
	n, ok := strings.CutPrefix(p, "/dev/fd/")
	return ok && n != "" && strings.Trim(n, "0123456789") == ""
}

// allowRules: every part of the call must be covered by an allow rule.
func (d *decider) allowRules() (Outcome, bool) {
	var used []Rule
	covered := func(pred func(c *compiled) bool) bool {
		for i := range d.rules {
			c := &d.rules[i]
			if c.rule.Action == DecisionAllow && c.matchTool(d.f.req) && pred(c) {
				if !slices.Contains(used, c.rule) {
					used = append(used, c.rule)
				}
				return true
			}
		}
		return false
	}
	ok := false
	switch {
	case covered(func(c *compiled) bool { return c.kind == kindAny }):
		ok = true
	case shellTools[d.f.req.Tool]:
		// A dynamic script is never allowed by command rules: what runs is
		// not what the text says.
		ok = d.f.shell != nil && d.f.shell.Dynamic == "" && len(d.f.shell.Commands) > 0 && !slices.ContainsFunc(d.f.shell.Assigns, riskyEnv)
		for _, cmd := range d.f.commands() {
			if cmd.Via != "" {
				continue // find -exec: find's own rule must name it (see allows)
			}
			ok = ok && covered(func(c *compiled) bool {
				return c.kind == kindShell && c.shell.allows(cmd.Words) && d.argsCovered(cmd, c.shell)
			})
		}
	case len(d.f.paths) > 0:
		ok = true
		for _, p := range d.f.paths {
			ok = ok && covered(func(c *compiled) bool { return c.kind == kindPath && c.matchPath(p, false) })
		}
	case d.f.host != "":
		ok = covered(func(c *compiled) bool { return c.kind == kindDomain && c.matchDomain(d.f.host) })
	}
	if !ok || len(used) == 0 {
		return Outcome{}, false
	}
	names := make([]string, len(used))
	for i, r := range used {
		names[i] = r.String()
	}
	r := used[0]
	return Outcome{Decision: DecisionAllow, Reason: fmt.Sprintf("allowed by %s rule %s", sourceName(r.Source), strings.Join(names, ", ")), Rule: &r}, true
}

// modeDefault decides what no rule covers (SPEC PERM-1), by the tool's
// declared effect: a tool with no effect outside the session (todo_write,
// ask_user) runs in every mode but strict.
func (d *decider) modeDefault() Outcome {
	m := d.f.req.Meta
	cat := m.Category
	if cat == "" {
		cat = tool.CategoryOther
	}
	switch {
	case d.mode == ModeStrict:
		return ask("strict mode confirms every tool call")
	case m.SessionOnly():
		return Outcome{Decision: DecisionAllow, Reason: fmt.Sprintf("%s has no effect outside the session; it runs in %s mode", d.f.req.Tool, d.mode)}
	}
	switch d.mode {
	case ModeBypass:
		return Outcome{Decision: DecisionAllow, Reason: "bypass mode runs every tool call no rule denies"}
	case ModePlan:
		return d.planDefault()
	case ModeReadOnly:
		if cat == tool.CategoryNetwork || d.f.host != "" {
			return ask("read-only mode asks before %s reaches the network", d.f.req.Tool)
		}
		return Outcome{Decision: DecisionAllow, Reason: "read-only mode runs read-only tools inside the workspace"}
	}
	runs := cat == tool.CategoryRead || (d.mode == ModeAcceptEdits && cat == tool.CategoryEdit)
	if !runs {
		return ask("%s mode asks before %s tools such as %s", d.mode, cat, d.f.req.Tool)
	}
	for _, p := range d.f.paths {
		if !p.inside() {
			return ask("%s is outside the workspace %s", p.abs, d.f.ws.dir)
		}
	}
	return Outcome{Decision: DecisionAllow, Reason: fmt.Sprintf("%s mode runs %s tools inside the workspace", d.mode, cat)}
}
