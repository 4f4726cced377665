package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/reinhq/rein/agent"
	"github.com/reinhq/rein/compact"
	"github.com/reinhq/rein/hook"
	"github.com/reinhq/rein/internal/suggest"
	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/permission"
	"github.com/reinhq/rein/tool"
	"github.com/reinhq/rein/tool/builtin"
	"github.com/reinhq/rein/workspace"
)

// DepthEnv is the variable that tells a rein started by a tool — an
// action's command, an MCP server, a shell command — how deep in a tree of
// agents it runs, so the depth limit holds across processes (SPEC AGENT-4).
const DepthEnv = "REIN_AGENT_DEPTH"

// DefaultMaxDepth bounds how deep sub-agents nest when the settings say
// nothing (subagents.max_depth).
const DefaultMaxDepth = 3

// subagentTools are left out of every sub-agent: it has no user to ask,
// and no plan of its own to present (PERM-7).
var subagentTools = []string{builtin.AskUserName, builtin.ExitPlanModeName}

// tree is what the task tools of one run share: the definitions, the
// approver every question of the tree goes to (one at a time), and the
// models sub-agents resolved.
type tree struct {
	c        *Conversation
	agents   []workspace.Agent
	maxDepth int
	approver permission.Approver

	mu     sync.Mutex
	models map[string]*Model
}

// taskTool is the task tool of an agent at some depth: it starts a
// sub-agent by name with a fresh context, its own tools and budget, and
// relays its events into the caller's stream (agent.Streamer).
type taskTool struct {
	t     *tree
	depth int // of the agent calling it; the sub-agent runs at depth+1
	spec  llm.ToolSpec
}

type taskInput struct {
	Agent       string `json:"agent"`
	Prompt      string `json:"prompt"`
	Description string `json:"description,omitempty"`
}

// newTaskTool describes the agents of the tree to the model. The
// description lists them sorted, so the tool list is stable (PROV-6).
func newTaskTool(t *tree, depth int) *taskTool {
	var b strings.Builder
	b.WriteString("Starts a sub-agent with its own tools that sees nothing of this conversation (give a complete prompt) and returns only its final report; calls in one reply run in parallel.\nAgents:")
	names := make([]any, 0, len(t.agents))
	for _, a := range t.agents {
		fmt.Fprintf(&b, "\n- %s: %s", a.Name, strings.Join(strings.Fields(a.Description), " "))
		names = append(names, a.Name)
	}
	schema, _ := json.Marshal(map[string]any{
		"type": "object",
		"properties": map[string]any{
			"agent":       map[string]any{"type": "string", "enum": names},
			"prompt":      map[string]any{"type": "string", "description": "the whole task"},
			"description": map[string]any{"type": "string", "description": "a few words, for the user"},
		},
		"required":             []string{"agent", "prompt"},
		"additionalProperties": false,
	})
	return &taskTool{t: t, depth: depth, spec: llm.ToolSpec{Name: "task", Description: b.String(), InputSchema: schema}}
}

// Spec implements tool.Tool.
func (tt *taskTool) Spec() llm.ToolSpec { return tt.spec }

// Meta implements tool.MetaTool: a task has no effect of its own (its
// agent's calls are checked one by one), and tasks run in parallel.
func (tt *taskTool) Meta() tool.Meta {
	return tool.Meta{ReadOnly: true, ConcurrencySafe: true, Category: tool.CategorySession}
}

// Run implements tool.Tool, dropping the sub-agent's events.
func (tt *taskTool) Run(ctx context.Context, call tool.Call) (tool.Result, error) {
	res, _, err := tt.RunStream(ctx, call, func(agent.Event) {})
	return res, err
}

// RunStream implements agent.Streamer: it runs the sub-agent to its end
// and returns its final text, and what it spent.
func (tt *taskTool) RunStream(ctx context.Context, call tool.Call, emit func(agent.Event)) (tool.Result, agent.Spent, error) {
	var in taskInput
	if err := json.Unmarshal(call.Input, &in); err != nil {
		return tool.Errorf("invalid task input: %v", err), agent.Spent{}, nil
	}
	def, ok := tt.t.agent(in.Agent)
	if !ok {
		return tool.Errorf("%s", tt.t.unknown(in.Agent)), agent.Spent{}, nil
	}
	depth := tt.depth + 1
	if depth > tt.t.maxDepth {
		return tool.Errorf("agent %s not started: sub-agents may nest %d deep, and this one would be %d deep", def.Name, tt.t.maxDepth, depth), agent.Spent{}, nil
	}
	a, err := tt.t.build(def, depth, call.ID)
	if err != nil {
		return tool.Errorf("agent %s not started: %v", def.Name, err), agent.Spent{}, nil
	}
	mark := agent.Subagent{Agent: def.Name, ParentCallID: call.ID, Depth: depth}
	p := llm.UserText(in.Prompt)
	sub := agent.Input{SessionID: call.SessionID, RunID: call.RunID, Prompt: &p, WorkDir: call.WorkDir,
		SessionDir: call.SessionDir, Depth: depth}
	var done *agent.DoneEvent
	for ev := range a.Run(ctx, sub) {
		if ev.Type == agent.EventDone && ev.Subagent == nil {
			done = ev.Done
		}
		emit(agent.Nest(ev, mark))
	}
	if done == nil {
		return tool.Errorf("agent %s ended without a result", def.Name), agent.Spent{}, nil
	}
	return taskResult(def.Name, done), agent.Spent{Usage: done.Usage, CostUSD: done.CostUSD}, nil
}

// taskResult is what the caller's model reads: the sub-agent's final text,
// and, when it did not complete, why.
func taskResult(name string, d *agent.DoneEvent) tool.Result {
	meta := map[string]any{"agent": name, "reason": string(d.Reason), "turns": d.Turns,
		"input_tokens": d.Usage.PromptTokens(), "output_tokens": d.Usage.OutputTokens, "cost_usd": d.CostUSD}
	text := strings.TrimSpace(d.Text)
	if d.Reason == agent.ReasonCompleted {
		if text == "" {
			text = "(the agent finished without a report)"
		}
		return tool.Result{Content: []llm.Block{&llm.Text{Text: text}}, Metadata: meta}
	}
	msg := fmt.Sprintf("agent %s stopped (%s", name, d.Reason)
	if d.Error != "" {
		msg += ": " + d.Error
	}
	msg += ")"
	if text != "" {
		msg += "; its last report:\n" + text
	}
	return tool.Result{Content: []llm.Block{&llm.Text{Text: msg}}, IsError: true, Metadata: meta}
}

func (t *tree) agent(name string) (workspace.Agent, bool) {
	for _, a := range t.agents {
		if a.Name == name {
			return a, true
		}
	}
	return workspace.Agent{}, false
}

// unknown says that no agent is called name, and which are.
func (t *tree) unknown(name string) string { return unknownAgent(name, t.agents).Error() }

// unknownAgent is the error of an agent name no definition has.
func unknownAgent(name string, agents []workspace.Agent) error {
	names := make([]string, 0, len(agents))
	for _, a := range agents {
		names = append(names, a.Name)
	}
	msg := fmt.Sprintf("no agent is called %q; the agents are: %s", name, strings.Join(names, ", "))
	if near := suggest.Closest(name, names, 1); len(near) > 0 {
		msg += "; did you mean " + near[0] + "?"
	}
	return errors.New(msg)
}

// tighterMode returns the mode an agent asking for mode b runs under
// when the configuration says a: b unless it is looser than a ("" asks
// for nothing). strict and read-only are equally tight; the agent's wins.
func tighterMode(a, b string) string {
	rank := workspace.Guarded[workspace.PermissionMode]
	if b == "" || rank[b] < rank[a] {
		return a
	}
	return b
}

// maxTurns is the model calls a run may make: the setting, or the main
// agent's when no flag or variable sets it.
func (s *Setup) maxTurns() int {
	v := s.ev.Get(workspace.MaxTurns)
	if s.main != nil && s.main.MaxTurns > 0 && v.Source != workspace.SourceFlag && v.Source != workspace.SourceEnv {
		return s.main.MaxTurns
	}
	return s.ev.Int(workspace.MaxTurns)
}

// allows reports whether agent definition def lets its agent use the tool
// called name (all tools when it names none; Claude Code's names stand for
// rein's, `*` wildcards match).
func allows(def *workspace.Agent, name string) bool {
	if def == nil {
		return true
	}
	if def.Tools != nil && !matchAny(toolPatterns(def.Tools), name) {
		return false
	}
	// A disallowed entry with a rule (Bash(rm:*)) denies the calls it
	// matches; only a bare name takes the tool away (agentscope.go).
	return !matchAny(toolPatterns(bareEntries(def.DisallowedTools)), name)
}

// build makes the agent of one sub-run: the definition's prompt over the
// workspace's environment and AGENTS.md, the parent's model unless it names
// one, the tools it allows, a permission mode no looser than the parent's,
// the parent's hooks (session_start and stop fire as subagent_start and
// subagent_stop), its own compactor and budget.
func (t *tree) build(def workspace.Agent, depth int, callID string) (*agent.Agent, error) {
	c, s := t.c, t.c.s
	m, err := t.model(def.Model)
	if err != nil {
		return nil, err
	}
	mode, approver := def.PermissionMode, t.approver
	if mode == workspace.AgentModeDontAsk {
		// Claude Code's dontAsk: what is pre-approved runs, every
		// question is answered no, and nobody is asked.
		mode, approver = "", nil
	}
	policy, err := s.agentPolicy(&def, mode)
	if err != nil {
		return nil, err
	}
	tools, err := t.tools(def, depth)
	if err != nil {
		return nil, err
	}
	system := agent.BuildSystem(s.promptParts(def.Prompt + t.skillText(def)))
	maxTurns := s.ev.Int(workspace.MaxTurns)
	if def.MaxTurns > 0 {
		maxTurns = def.MaxTurns
	}
	cfg := agent.Config{
		Provider: m.Provider, ProviderName: m.ProviderName, Model: m.Name,
		Caps:   agent.Caps{NoVision: !m.Caps.Vision, NoToolResultImages: !m.Caps.ToolResultImages},
		System: system, Tools: tools, MaxTurns: maxTurns, MaxTokens: s.ev.Int(workspace.MaxTokens),
		TokenBudget: int64(s.ev.Int(workspace.SubagentMaxTokens)), CostBudget: s.ev.Float(workspace.SubagentMaxCost),
		ToolTimeout: s.toolTimeout,
		Compactor: compact.New(compact.Config{ContextWindow: m.Caps.ContextWindow, MaxOutput: m.Caps.MaxOutput,
			Provider: llm.Retrying(m.Provider, llm.RetryPolicy{}), Model: m.Name, Logger: s.logger}),
		Price: m.Caps.Price.Cost, Logger: s.logger, Now: s.cfg.Now,
		Permissions: &agent.Gate{Policy: policy, Approver: approver, Rules: s.policy, Auditor: c.audit,
			Timeout: s.policy.AskTimeout(), Logger: s.logger, Now: s.cfg.Now, Agent: def.Name},
	}
	if c.hooks != nil {
		cfg.Hooks = subagentHooks{h: sessionHooks{c}, agent: def.Name, id: callID}
	}
	return agent.New(cfg), nil
}

// model resolves the model a definition names; "" is the parent's.
func (t *tree) model(spec string) (*Model, error) {
	if spec == "" {
		return t.c.s.model, nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if m, ok := t.models[spec]; ok {
		return m, nil
	}
	m, err := t.c.s.cfg.Resolve(t.c.s.reg, spec)
	if err != nil {
		return nil, fmt.Errorf("model %q: %w", spec, err)
	}
	if t.models == nil {
		t.models = map[string]*Model{}
	}
	t.models[spec] = m
	return m, nil
}

// tools returns the tools of a sub-agent at depth: the session's tools the
// definition allows (all when it names none; Claude Code's names stand for
// rein's, `*` wildcards match), without those it disallows and without
// ask_user, and a task tool of its own while deeper agents may nest.
func (t *tree) tools(def workspace.Agent, depth int) (*tool.Set, error) {
	set := t.c.tools.Filter(func(name string, _ *tool.Entry) bool {
		return !slices.Contains(subagentTools, name) && (allows(&def, name) || searchFor(&def, name))
	})
	if depth < t.maxDepth && allows(&def, "task") && allows(t.c.s.main, "task") {
		if err := set.Add(tool.OriginAgent, newTaskTool(t, depth)); err != nil {
			return nil, err
		}
	}
	return set, nil
}

// toolPatterns maps a definition's tool names to rein's: a Claude Code
// name to the tools it stands for, anything else as written. An entry
// with a rule (Bash(git diff:*)) stands for its tool.
func toolPatterns(names []string) []string {
	var out []string
	for _, n := range names {
		n = toolName(n)
		if rein, ok := tool.ClaudeToolNames[n]; ok {
			out = append(out, rein...)
			continue
		}
		out = append(out, n)
	}
	return out
}

func matchAny(patterns []string, name string) bool {
	for _, p := range patterns {
		if ok, _ := path.Match(p, name); ok || p == name {
			return true
		}
	}
	return false
}

// subPolicy returns the permission policy of a sub-agent whose definition
// asks for mode: the parent's, or one under the tighter of the two modes.
func (s *Setup) subPolicy(mode string) (*permission.Engine, error) {
	parent := string(s.policy.Mode())
	if mode = tighterMode(parent, mode); mode == parent && !s.mainRules {
		return s.policy, nil
	}
	s.subs.mu.Lock()
	defer s.subs.mu.Unlock()
	if p, ok := s.subs.m[mode]; ok {
		return p, nil
	}
	p, err := s.newPolicy(permission.Mode(mode))
	if err != nil {
		return nil, err
	}
	if s.subs.m == nil {
		s.subs.m = map[string]*permission.Engine{}
	}
	s.subs.m[mode] = p
	return p, nil
}

// subagentHooks are the parent's hooks as a sub-agent's run fires them:
// its start and stop are subagent_start and subagent_stop, naming the
// agent (AgentType) and the call that started it (AgentID); the session's
// own events (session_start, session_end, user_prompt_submit,
// notification) are the parent's alone.
type subagentHooks struct {
	h         agent.Hooks
	agent, id string
}

func (s subagentHooks) event(ev hook.Event) (hook.Event, bool) {
	switch ev {
	case hook.SessionStart:
		return hook.SubagentStart, true
	case hook.Stop:
		return hook.SubagentStop, true
	case hook.SessionEnd, hook.UserPromptSubmit, hook.Notification:
		return "", false
	}
	return ev, true
}

// Has implements agent.Hooks.
func (s subagentHooks) Has(ev hook.Event) bool {
	ev, ok := s.event(ev)
	return ok && s.h.Has(ev)
}

// Fire implements agent.Hooks.
func (s subagentHooks) Fire(ctx context.Context, ev hook.Event, in hook.Input) (hook.Outcome, error) {
	ev, ok := s.event(ev)
	if !ok {
		return hook.Outcome{}, nil
	}
	in.AgentID, in.AgentType = s.id, s.agent
	if ev == hook.SubagentStart {
		in.Source = ""
	}
	return s.h.Fire(ctx, ev, in)
}

// serialApprover passes one question at a time to the approver: the
// agents of a tree run in parallel, and the user answers one after the
// other.
type serialApprover struct {
	mu sync.Mutex
	a  permission.Approver
}

// Approve implements permission.Approver.
func (s *serialApprover) Approve(ctx context.Context, p permission.Prompt) (permission.Verdict, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.a.Approve(ctx, p)
}

// baseDepth reads how deep in a tree of agents this process runs (DepthEnv).
func baseDepth(getenv func(string) string) (int, error) {
	v := strings.TrimSpace(getenv(DepthEnv))
	if v == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%s=%q: want a whole number ≥ 0", DepthEnv, v)
	}
	return n, nil
}

// maxDepth is how deep sub-agents may nest (subagents.max_depth).
func (s *Setup) maxDepth() int { return s.ev.Int(workspace.SubagentMaxDepth) }

// runTools returns the tools of one run: the session's, with ask_user
// asking the run's approver when it can ask (a builtin.Asker), and the
// task tool while sub-agents may still nest and agents are defined. Its
// tree shares approver among every agent the run starts.
func (c *Conversation) runTools(approver permission.Approver) *tool.Set {
	set := c.withPlanTool(c.tools)
	if ca, ok := approver.(callAsker); ok && set != nil {
		// A server's run: the question goes out as an event (askuser.go).
		if _, has := set.Get(builtin.AskUserName); has {
			swapped, err := set.Swap(newRemoteAskTool(ca, c.s.policy.AskTimeout()))
			if err != nil {
				c.s.logger.Warn("ask_user cannot ask this run's user", "err", err)
			} else {
				set = swapped
			}
		}
	} else if asker, ok := approver.(builtin.Asker); ok && set != nil {
		if _, has := set.Get(builtin.AskUserName); has {
			swapped, err := set.Swap(builtin.NewAskUser(asker))
			if err != nil {
				c.s.logger.Warn("ask_user cannot ask this run's user", "err", err)
			} else {
				set = swapped
			}
		}
	}
	agents := c.s.cfg.Loaded.Definitions().Agents
	if set == nil || len(agents) == 0 || c.s.depth >= c.s.maxDepth() || slices.Contains(c.s.cfg.Hidden, "task") || !allows(c.s.main, "task") {
		return set
	}
	t := &tree{c: c, agents: agents, maxDepth: c.s.maxDepth()} // agents sorted by name, as Definitions keeps them
	if approver != nil {
		t.approver = &serialApprover{a: approver}
	}
	withTask := set.Filter(func(string, *tool.Entry) bool { return true })
	if err := withTask.Add(tool.OriginAgent, newTaskTool(t, c.s.depth)); err != nil {
		c.s.logger.Warn("the task tool is left out", "err", err)
		return set
	}
	return withTask
}
