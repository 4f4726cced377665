package runner

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/reinhq/rein/permission"
	"github.com/reinhq/rein/tool"
	"github.com/reinhq/rein/workspace"
)

// An agent's tool rules (SPEC COMPAT-1, AGENT-1, PERM-2, PERM-5).
//
// Claude Code lets an agent's `tools` list hold rules: `Bash(git diff:*)`
// makes Bash available to the agent for the calls the rule matches, and
// those calls run without asking. rein reads such an entry as three
// things, all scoped to that agent:
//
//   - the tool (bash) is in the agent's tool set;
//   - its calls must match one of the agent's rules on it: any other call
//     is denied, with the rules in the reason (unless the list also names
//     the bare tool, Bash, which makes every call possible again);
//   - the calls that match are pre-approved: an allow rule of the agent,
//     as if the user had written it — but only for an agent of the user's
//     own configuration or of a workspace the user trusted. It never
//     widens past the configuration: deny and ask rules, the built-in
//     protections and the strict mode still decide first, and the agent's
//     mode is never looser than its parent's.
//
// A `disallowedTools` entry with a rule (`Bash(rm:*)`) is a deny rule of
// the agent: the tool stays, the calls it matches are refused.

// agentScope is what an agent definition's tool rules add to its policy.
type agentScope struct {
	// only maps a rein tool to the rules each of its calls must match.
	only map[string][]permission.Rule
	// allow are the pre-approvals, deny the agent's deny rules.
	allow, deny []permission.Rule
	// agents, when not nil, are the only agents its task tool may start
	// (Claude Code's `Agent(worker, researcher)`).
	agents []string
}

func (sc agentScope) empty() bool {
	return len(sc.only) == 0 && len(sc.allow) == 0 && len(sc.deny) == 0 && sc.agents == nil
}

// taskAgents reads the agent names of `Agent(worker, researcher)` (or the
// legacy `Task(…)`); ok is false for an entry of another tool.
func taskAgents(entry string) (names []string, ok bool) {
	name := toolName(entry)
	if tools := toolPatterns([]string{name}); len(tools) != 1 || tools[0] != "task" || !strings.HasSuffix(entry, ")") {
		return nil, false
	}
	inner := entry[strings.IndexByte(entry, '(')+1 : len(entry)-1]
	names = append([]string{}, strings.FieldsFunc(inner, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' })...)
	return names, true
}

// toolName returns the tool name of an entry of tools or disallowedTools:
// "Bash" of "Bash(git diff:*)".
func toolName(entry string) string {
	entry = strings.TrimSpace(entry)
	if i := strings.IndexByte(entry, '('); i >= 0 {
		return strings.TrimSpace(entry[:i])
	}
	return entry
}

// bareEntries returns the entries that name a tool without a rule.
func bareEntries(entries []string) []string {
	var out []string
	for _, e := range entries {
		if !strings.Contains(e, "(") {
			out = append(out, e)
		}
	}
	return out
}

// scopeOf reads the rules of def's tools and disallowedTools. preapprove
// says whether its allow rules may pre-approve (see Setup.mayPreapprove).
// Entries that do not parse were reported when the definition loaded and
// are skipped here.
func scopeOf(def *workspace.Agent, preapprove bool) agentScope {
	var sc agentScope
	if def == nil {
		return sc
	}
	source := permission.Source("agent " + def.Name)
	bare := toolPatterns(bareEntries(def.Tools))
	for _, e := range def.Tools {
		if names, ok := taskAgents(e); ok {
			if !matchAny(bare, "task") {
				sc.agents = append(sc.agents, names...)
			}
			continue
		}
		_, r, err := workspace.SplitToolEntry(e)
		if err != nil || r == nil {
			continue
		}
		r.Source = source
		for _, t := range toolPatterns([]string{toolName(e)}) {
			if matchAny(bare, t) {
				continue
			}
			if sc.only == nil {
				sc.only = map[string][]permission.Rule{}
			}
			sc.only[t] = append(sc.only[t], *r)
		}
		if preapprove {
			sc.allow = append(sc.allow, *r)
		}
	}
	for _, e := range def.DisallowedTools {
		if _, ok := taskAgents(e); ok {
			continue // Agent(x) in disallowedTools: left to the deny rule below
		}
		_, r, err := workspace.SplitToolEntry(e)
		if err != nil || r == nil {
			continue
		}
		r.Action, r.Source = permission.DecisionDeny, source
		sc.deny = append(sc.deny, *r)
	}
	return sc
}

// mayPreapprove reports whether an agent's tool rules may pre-approve
// calls: those of the user's own configuration and of rein's built-ins
// may; a workspace's only once the user trusted the workspace (PERM-5).
// (Definitions holds no untrusted workspace's agent; this is the second
// lock.)
func (s *Setup) mayPreapprove(def *workspace.Agent) bool {
	if def.Origin != workspace.OriginWorkspace {
		return true
	}
	return s.cfg.Loaded != nil && s.cfg.Loaded.Trust.Trusted
}

// scopedPolicy is the policy of an agent with tool rules: a call of a tool
// its rules restrict is denied unless one of them matches it; otherwise
// the agent's policy (its rules added) decides.
type scopedPolicy struct {
	agent string
	// base decides every call that passes the scope.
	base permission.Policy
	// match holds only the agent's rules on the restricted tools: a call
	// passes when it allows the call by one of them.
	match  *permission.Engine
	only   map[string][]permission.Rule
	agents []string // nil: any agent
}

// Decide implements permission.Policy.
func (p *scopedPolicy) Decide(ctx context.Context, req permission.Request) (permission.Outcome, error) {
	if req.Tool == "task" && p.agents != nil {
		var in taskInput
		_ = json.Unmarshal(req.Input, &in)
		if !slices.Contains(p.agents, in.Agent) {
			return permission.Outcome{Decision: permission.DecisionDeny,
				Reason: fmt.Sprintf("agent %s may start only the agents %s, not %q", p.agent, strings.Join(p.agents, ", "), in.Agent)}, nil
		}
	}
	if rules, ok := p.only[req.Tool]; ok {
		o, err := p.match.Decide(ctx, req)
		if err != nil {
			return permission.Outcome{}, err
		}
		if o.Decision != permission.DecisionAllow || o.Rule == nil {
			names := make([]string, len(rules))
			for i, r := range rules {
				names[i] = r.String()
			}
			return permission.Outcome{Decision: permission.DecisionDeny,
				Reason: fmt.Sprintf("agent %s may call %s only as its tools list says (%s), and this call is not one of those; ask for it in the report instead",
					p.agent, req.Tool, strings.Join(names, ", "))}, nil
		}
	}
	return p.base.Decide(ctx, req)
}

// agentPolicy returns the policy of a sub-agent: under mode (already no
// looser than the parent's), with def's tool rules when it has any.
func (s *Setup) agentPolicy(def *workspace.Agent, mode string) (permission.Policy, error) {
	sc := scopeOf(def, s.mayPreapprove(def))
	if sc.empty() {
		return s.subPolicy(mode)
	}
	key := "agent " + def.Name + " " + mode
	s.subs.mu.Lock()
	defer s.subs.mu.Unlock()
	if p, ok := s.subs.scoped[key]; ok {
		return p, nil
	}
	base, err := s.newPolicy(permission.Mode(tighterMode(string(s.policy.Mode()), mode)), slices.Concat(sc.deny, sc.allow)...)
	if err != nil {
		return nil, fmt.Errorf("agent %s: %w", def.Name, err)
	}
	p, err := s.scope(def.Name, base, sc)
	if err != nil {
		return nil, err
	}
	if s.subs.scoped == nil {
		s.subs.scoped = map[string]*scopedPolicy{}
	}
	s.subs.scoped[key] = p
	return p, nil
}

// scope returns base within the restrictions of an agent's tool rules.
func (s *Setup) scope(agent string, base permission.Policy, sc agentScope) (*scopedPolicy, error) {
	var onlyRules []permission.Rule
	for _, rules := range sc.only {
		onlyRules = append(onlyRules, rules...)
	}
	match, err := permission.NewPolicy(permission.Settings{Mode: permission.ModeDefault, Rules: onlyRules})
	if err != nil {
		return nil, fmt.Errorf("agent %s: %w", agent, err)
	}
	return &scopedPolicy{agent: agent, base: base, match: match, only: sc.only, agents: sc.agents}, nil
}

// agentToolWarnings says, for each agent that applies, the entries of its
// tools that name no tool of this build (COMPAT-1): a tool of another
// branch (job_output, exit_plan_mode) "not available in this build", a
// name nothing answers to "names no tool". have lists the tools the
// session has (MCP tools and actions included); task is always there.
func agentToolWarnings(agents []workspace.Agent, have []string) []string {
	var out []string
	for _, a := range agents {
		if a.Origin == workspace.OriginBuiltin {
			continue // rein's own: their tools are rein's names, some only in some sessions
		}
		for _, e := range a.Tools {
			name := toolName(e)
			if slices.Contains(tool.ClaudeNoEquivalent, name) {
				continue // reported when the definition loaded
			}
			pats := toolPatterns([]string{name})
			found := false
			for _, t := range append(slices.Clone(have), "task") {
				if matchAny(pats, t) {
					found = true
					break
				}
			}
			if found {
				continue
			}
			if _, claude := tool.ClaudeToolNames[name]; claude {
				out = append(out, fmt.Sprintf("agent %s: tools: %s (rein's %s) is not available in this build; the agent runs without it",
					a.Name, name, strings.Join(pats, ", ")))
				continue
			}
			out = append(out, fmt.Sprintf("agent %s: tools: %s names no tool of this session; the agent runs without it", a.Name, name))
		}
	}
	return out
}
