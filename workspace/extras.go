package workspace

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/reinhq/rein/hook"
	"github.com/reinhq/rein/permission"
)

// The kinds of [Extra].
const (
	ExtraAllow     = "allow rule"
	ExtraSensitive = "sensitive-file exception"
	ExtraHook      = "hook"
	ExtraSetting   = "setting"
	ExtraMCP       = "MCP server"
	ExtraAgents    = "agent"
	ExtraSkills    = "skill"
	ExtraActions   = "action"
	ExtraCommands  = "command"
)

// Extra is one thing a workspace brings that widens permissions or runs
// code (SPEC PERM-5): an allow rule, an exception to the sensitive files,
// a hook, a setting that names a path or a model outside rein's control,
// an MCP server, an agent, a skill, an action or a slash command. It applies only once the
// user trusted the workspace; deny and ask rules and added sensitive files
// only tighten, and always apply.
type Extra struct {
	Kind string `json:"kind"`
	// What names it: the rule, the pattern, the hook's event and command,
	// the setting and its value, the definition's name (with an MCP
	// server's command line or URL, an action's command).
	What string `json:"what"`
	// File is where it is declared, relative to the workspace root.
	File string `json:"file"`
	// Pending marks what this version of rein does not load yet: trust
	// covers it for later, and nothing is ignored today. Nothing sets it
	// now (MCP servers, agents, skills and actions load); it is kept for
	// the readers of Extra.
	Pending bool `json:"pending,omitempty"`
}

// String describes the extra on one line.
func (x Extra) String() string {
	s := x.Kind + " " + x.What + " (" + x.File + ")"
	if x.Pending {
		s += " — not loaded by this version of rein yet"
	}
	return s
}

// Trust is the trust state of a loaded workspace (SPEC PERM-5).
type Trust struct {
	// Trusted: the user trusted the workspace, and its trust-relevant
	// files ([TrustFiles], [TrustDirs]) are as they were then.
	Trusted bool
	// Lost: the user trusted the workspace once, and the files changed
	// since.
	Lost bool
	// Changed names, when Lost, the files that changed since the user
	// trusted the workspace ([TrustRecord.Changes]).
	Changed []string
	// Fingerprint is the digest of the files now; empty when it could not
	// be computed (Err says why: the workspace cannot be trusted then).
	Fingerprint string
	Err         error
	// Extras is everything the workspace brings that needs trust.
	Extras []Extra
	// Approved are the rules the user granted here by answering "always";
	// they apply either way.
	Approved []string
	// Warnings say what an untrusted workspace's extras were ignored, one
	// line each; empty when trusted or when there is nothing to ignore.
	Warnings []string

	manifest Manifest // what Fingerprint covers, for TrustNow
}

// Ignored returns the extras that do not apply: those not pending, unless
// the workspace is trusted.
func (t Trust) Ignored() []Extra {
	if t.Trusted {
		return nil
	}
	var out []Extra
	for _, x := range t.Extras {
		if !x.Pending {
			out = append(out, x)
		}
	}
	return out
}

// hookFile is one hooks file as read.
type hookFile struct {
	path      string
	workspace bool
	specs     []hook.Spec
	err       error
}

// loadHooks reads the user's hooks (Claude Code's managed and user
// settings, then rein's hooks.yaml) and the workspace's (.rein/hooks.yaml,
// .claude/settings.json, .claude/settings.local.json). A file that does
// not parse is kept with its error: [Loaded.Hooks] reports it when the
// file would apply.
func (l *Loaded) loadHooks() {
	var files []hookFile
	for _, p := range l.claudeManagedFiles() {
		files = append(files, hookFile{path: p})
	}
	user := l.Paths.ClaudeUserSettings()
	if !l.withoutUser {
		files = append(files, hookFile{path: user}, hookFile{path: l.Paths.UserHooks()})
	}
	files = append(files, hookFile{path: l.Workspace.Hooks(), workspace: true})
	if p := l.Workspace.ClaudeSettings(); p != user {
		files = append(files, hookFile{path: p, workspace: true})
	}
	files = append(files, hookFile{path: l.Workspace.ClaudeLocalSettings(), workspace: true})
	for _, f := range files {
		if f.workspace && l.claudeOutside(f.path) {
			continue // not read: loadClaude reports it
		}
		l.trace.add(f.path)
		f.specs, f.err = hook.Load(f.path)
		if f.err != nil && !f.workspace && f.path != l.Paths.UserHooks() {
			// Claude Code's own user or managed file, written for Claude
			// Code's hook types (prompt, agent, …): its hooks are left out
			// and said so, rather than stopping every run.
			l.ClaudeUnmapped = append(l.ClaudeUnmapped, fmt.Sprintf("Claude Code settings %s: hooks not loaded: %v", f.path, f.err))
			f.specs, f.err = nil, nil
		}
		l.hooks = append(l.hooks, f)
	}
}

// claudeOutside reports a workspace's Claude Code settings file that a
// symbolic link takes outside the workspace (see readClaudeSettings).
func (l *Loaded) claudeOutside(path string) bool {
	return slices.ContainsFunc(l.Claude, func(f ClaudeFile) bool {
		return f.Path == path && f.Scope.workspace() && slices.ContainsFunc(f.Unmapped, func(u string) bool { return strings.HasPrefix(u, "not read: ") })
	})
}

// Hooks returns the hooks that apply: the user's, and the workspace's once
// it is trusted. A workspace hook with the same non-empty name as an
// earlier one (the user's) replaces it, in its place; unnamed hooks add
// up. The error names a file that would apply and does not parse.
func (l *Loaded) Hooks() ([]hook.Spec, error) {
	specs, _, err := l.hookSpecs()
	return specs, err
}

// hookSpecs is [Loaded.Hooks], also saying of each hook whether a
// workspace file declared it.
func (l *Loaded) hookSpecs() ([]hook.Spec, []bool, error) {
	for _, f := range l.hooks {
		if f.err != nil && (!f.workspace || l.Trust.Trusted) {
			return nil, nil, f.err
		}
	}
	specs, fromWS, _ := mergeHooks(l.hooks, l.Trust.Trusted)
	return specs, fromWS, nil
}

// mergeHooks merges the hooks of the files that parse — the workspace's
// too when workspace is true — by name: a hook named like one of an
// earlier file replaces it (once: a name repeated within a file adds
// up), saying of each whether a workspace file declared it. Each
// replacement is a Clash.
func mergeHooks(files []hookFile, workspace bool) ([]hook.Spec, []bool, []Clash) {
	var out []hook.Spec
	var fromWS []bool
	var clashes []Clash
	type seen struct {
		at   int
		path string
	}
	named := map[string]seen{}
	for _, f := range files {
		if f.err != nil || (f.workspace && !workspace) {
			continue
		}
		here := map[string]seen{}
		for _, s := range f.specs {
			prev, ok := named[s.Name]
			if _, again := here[s.Name]; ok && !again && s.Name != "" {
				out[prev.at], fromWS[prev.at] = s, f.workspace
				clashes = append(clashes, Clash{Kind: DefHook, Name: s.Name, Paths: []string{prev.path, f.path}})
				here[s.Name] = seen{prev.at, f.path}
				continue
			}
			if s.Name != "" {
				here[s.Name] = seen{len(out), f.path}
			}
			out, fromWS = append(out, s), append(fromWS, f.workspace)
		}
		maps.Copy(named, here)
	}
	return out, fromWS, clashes
}

// withHookClashes adds to d the hooks replaced by name, the workspace's
// included when workspace is true.
func (l *Loaded) withHookClashes(d *Definitions, workspace bool) *Definitions {
	_, _, clashes := mergeHooks(l.hooks, workspace)
	d.Clashes = append(d.Clashes, clashes...)
	return d
}

// HookErrors lists the hooks files that do not parse, the workspace's
// included whether it is trusted or not.
func (l *Loaded) HookErrors() []error {
	var out []error
	for _, f := range l.hooks {
		if f.err != nil {
			out = append(out, f.err)
		}
	}
	return out
}

// loadTrust computes the fingerprint, reads the user's record of the
// workspace and lists its extras and, unless it is trusted, the warnings.
func (l *Loaded) loadTrust() {
	t := &l.Trust
	t.manifest, t.Err = fingerprintFiles(l.Workspace.Root, l.trace)
	t.Fingerprint = t.manifest.Digest
	l.trace.add(l.Paths.TrustFile())
	l.trace.lookup(l.Workspace.Root)
	rec, err := l.TrustStore().Get(l.Workspace.Root)
	if err != nil && t.Err == nil {
		t.Err = err
	}
	t.Approved = rec.Approved
	if t.Err == nil {
		t.Trusted = rec.Trusted(t.Fingerprint)
		t.Lost = rec.Fingerprint != "" && !t.Trusted
		t.Changed = rec.Changes(t.manifest)
	}
	t.Extras = l.extras()
	ignored := t.Ignored()
	if len(ignored) == 0 {
		return
	}
	if t.Err != nil {
		t.Warnings = append(t.Warnings, fmt.Sprintf("workspace trust cannot be checked: %v", t.Err))
	}
	if t.Lost {
		t.Warnings = append(t.Warnings, "workspace trust lost: what it declares, runs or loads changed since you trusted it: "+strings.Join(t.Changed, "; "))
	}
	for _, x := range ignored {
		t.Warnings = append(t.Warnings, "workspace not trusted: ignored "+x.String())
	}
	t.Warnings = append(t.Warnings, "review what the workspace brings and trust it with: rein trust "+l.Workspace.Root)
}

// extras lists what the workspace brings that needs trust.
func (l *Loaded) extras() []Extra {
	var out []Extra
	for _, s := range []Settings{l.Project, l.Local} {
		file := l.rel(s.Path)
		for _, r := range s.Permissions.Rules {
			if r.Action == permission.DecisionAllow && !l.approved(s, r) {
				out = append(out, Extra{Kind: ExtraAllow, What: r.String(), File: file})
			}
		}
		for _, p := range s.Permissions.SensitiveFiles {
			if strings.HasPrefix(strings.TrimSpace(p), "!") {
				out = append(out, Extra{Kind: ExtraSensitive, What: strings.TrimSpace(p), File: file})
			}
		}
		for _, name := range slices.Sorted(maps.Keys(s.Values)) {
			if gatedValue(name, s.Values[name]) {
				out = append(out, Extra{Kind: ExtraSetting, What: name + ": " + clip(s.Values[name], 120), File: file})
			}
		}
	}
	out = append(out, l.claudeExtras()...)
	for _, f := range l.hooks {
		if !f.workspace {
			continue
		}
		if f.err != nil {
			out = append(out, Extra{Kind: ExtraHook, What: "file that does not parse: " + f.err.Error(), File: l.rel(f.path)})
		}
		for _, s := range f.specs {
			out = append(out, Extra{Kind: ExtraHook, What: describeHook(s), File: l.rel(f.path)})
		}
	}
	return append(out, l.definitionExtras()...)
}

// approved reports whether r, a rule of the workspace's local settings, is
// one the user granted by answering "always" here.
func (l *Loaded) approved(s Settings, r permission.Rule) bool {
	return s.Path == l.Local.Path && slices.Contains(l.Trust.Approved, r.String())
}

// describeHook names a hook: its event, matcher, command or URL, and the
// variables it is given.
func describeHook(s hook.Spec) string {
	what := string(s.Event)
	if s.Matcher != "" && s.Matcher != "*" {
		what += " [" + s.Matcher + "]"
	}
	if s.Command != "" {
		what += ": " + clip(s.Command, 120)
	} else {
		what += ": POST " + s.URL
	}
	if len(s.Env) > 0 {
		what += " (gets " + strings.Join(s.Env, ", ") + ")"
	}
	return what
}

func clip(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}

// definitionExtras lists the MCP servers, agents, skills and actions the
// workspace declares, as loaded (a disabled server runs nothing, and a
// definition that does not load brings nothing: Definitions.Problems
// reports it). A server is shown as written: its variables expanded
// could put secrets in the warnings.
func (l *Loaded) definitionExtras() []Extra {
	d := l.AllDefinitions()
	var out []Extra
	for _, s := range d.MCP {
		if s.Origin == OriginWorkspace && !s.Disabled {
			out = append(out, Extra{Kind: ExtraMCP, What: s.Name + ": " + clip(s.Declared, 120), File: l.rel(s.Path)})
		}
	}
	for _, a := range d.Agents {
		if a.Origin == OriginWorkspace {
			out = append(out, Extra{Kind: ExtraAgents, What: a.Name, File: l.rel(a.Path)})
		}
	}
	for _, s := range d.Skills {
		if s.Origin == OriginWorkspace {
			out = append(out, Extra{Kind: ExtraSkills, What: s.Name, File: l.rel(s.Path)})
		}
	}
	for _, a := range d.Actions {
		if a.Origin == OriginWorkspace {
			out = append(out, Extra{Kind: ExtraActions, What: a.Name + ": " + clip(a.CommandLine(), 120), File: l.rel(a.Path)})
		}
	}
	for _, c := range d.Commands {
		if c.Origin == OriginWorkspace {
			out = append(out, Extra{Kind: ExtraCommands, What: "/" + c.Name, File: l.rel(c.Path)})
		}
	}
	return out
}

// gatedValue reports whether a workspace file's setting needs trust:
// sessions_dir (a path anywhere: where transcripts go, and what --continue
// and --kill-orphans read back), a replay: model (a cassette of the
// repository's, standing in for the model), the settings that shape the
// system prompt ([PromptSettings]), and what widens the sandbox (SPEC
// TOOL-7): hosts, writable directories, a network other than off, and the
// user's own caches.
func gatedValue(name, v string) bool {
	switch name {
	case SessionsDir, SystemPrompt, AppendSystemPrompt, SandboxAllowHosts, SandboxWritable:
		return true
	case Model:
		return strings.HasPrefix(v, "replay:")
	case SandboxNetwork:
		return v != "off"
	case SandboxCaches:
		return v == "shared"
	}
	return false
}

// gate returns the layer without its gated values when the workspace is
// not trusted; a trusted one's prompt settings are screened
// ([Loaded.screenPrompts]).
func (l *Loaded) gate(layer Layer) Layer {
	if l.Trust.Trusted {
		return l.screenPrompts(layer)
	}
	var values map[string]string
	for name, v := range layer.Values {
		if gatedValue(name, v) {
			if values == nil {
				values = maps.Clone(layer.Values)
			}
			delete(values, name)
		}
	}
	if values != nil {
		layer.Values = values
	}
	return layer
}

// workspacePermissions returns what a workspace file's permissions may
// do: everything once trusted; otherwise its deny and ask rules, the allow
// rules the user approved here, and the sensitive files it adds, without
// its exceptions.
func (l *Loaded) workspacePermissions(s Settings) permission.Settings {
	p := s.Permissions
	if l.Trust.Trusted {
		return p
	}
	p.Rules = slices.DeleteFunc(slices.Clone(p.Rules), func(r permission.Rule) bool {
		return !l.RuleApplies(s, r)
	})
	p.SensitiveFiles = slices.DeleteFunc(slices.Clone(p.SensitiveFiles), func(f string) bool {
		return strings.HasPrefix(strings.TrimSpace(f), "!")
	})
	return p
}

// RuleApplies reports whether rule r of settings file s applies: always
// for the user's files and for deny and ask rules; for a workspace's
// allow rules, once the workspace is trusted or when the user approved
// the rule here.
func (l *Loaded) RuleApplies(s Settings, r permission.Rule) bool {
	if s.Path != l.Project.Path && s.Path != l.Local.Path {
		return true
	}
	return r.Action != permission.DecisionAllow || l.Trust.Trusted || l.approved(s, r)
}

// TrustStore is the user's trust file.
func (l *Loaded) TrustStore() *TrustStore {
	if l.trustStore == nil {
		l.trustStore = &TrustStore{Path: l.Paths.TrustFile()}
	}
	return l.trustStore
}

// TrustNow records that the user trusts the workspace as it was loaded:
// if its files changed since, the trust recorded does not hold for them.
// A workspace whose fingerprint could not be computed, or whose hooks do
// not parse, cannot be trusted. Load again to apply the extras.
func (l *Loaded) TrustNow(now time.Time) error {
	if l.Trust.Err != nil {
		return l.Trust.Err
	}
	for _, f := range l.hooks {
		if f.workspace && f.err != nil {
			return fmt.Errorf("%w (fix it before trusting the workspace)", f.err)
		}
	}
	return l.TrustStore().Trust(l.Workspace.Root, l.Trust.manifest, now)
}

// RuleStore returns where "always" answers go: the workspace's
// .rein/settings.local.yaml (through permission.FileStore). The user's
// approval of each allow rule is remembered in the trust file, so the rule
// applies in later runs even in an untrusted workspace; and a workspace
// trusted before rein's own write stays trusted after it. An untrusted
// workspace never becomes trusted by it.
func (l *Loaded) RuleStore() permission.RuleStore {
	return &ruleStore{file: &permission.FileStore{Path: l.Workspace.LocalSettings()}, trust: l.TrustStore(),
		root: l.Workspace.Root}
}

// ruleStore is [Loaded.RuleStore].
type ruleStore struct {
	mu    sync.Mutex
	file  *permission.FileStore
	trust *TrustStore
	root  string
}

// Add writes the rule and records it in the trust file.
func (s *ruleStore) Add(ctx context.Context, r permission.Rule) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	before, berr := FingerprintFiles(s.root)
	if err := s.file.Add(ctx, r); err != nil {
		return err
	}
	after, aerr := FingerprintFiles(s.root)
	if berr != nil || aerr != nil {
		before, after = Manifest{}, Manifest{}
	}
	rule := ""
	if r.Action == permission.DecisionAllow {
		rule = r.String()
	}
	if rule == "" && before.Digest == "" {
		return nil
	}
	return s.trust.approve(s.root, rule, before, after)
}
