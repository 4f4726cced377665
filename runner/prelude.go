package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"strings"
	"time"

	"github.com/reinhq/rein/agent"
	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/permission"
	"github.com/reinhq/rein/session"
	"github.com/reinhq/rein/tool"
)

// PreludeTimeout bounds one prelude of a slash command, as in Claude Code.
const PreludeTimeout = 2 * time.Minute

// maxPreludeError bounds the output a failed prelude's error holds.
const maxPreludeError = 2000

// ErrPreludeRefused is the error of a prelude the permission policy did
// not allow, or that may not run here; the message says why and how to
// allow it.
var ErrPreludeRefused = errors.New("refused")

// RunPrelude runs a slash command's prelude (SPEC COMPAT-1: !`cmd`) with
// the conversation's bash tool — the same sandbox, environment and output
// limits as the model's commands — once the permission policy allowed it,
// within grant (the command's allowed-tools), and returns its output. It
// never asks: a script the policy would ask about and grant does not cover
// is refused, as are a denied one and any in a workspace the user has not
// trusted (SPEC PERM-5). The call is audited like the model's; a failed
// command (a non-zero exit but 1 from grep, rg, diff or cmp, which say
// "no match" or "differs" so) is an error holding its output. The session
// is created when it does not exist yet.
func (c *Conversation) RunPrelude(ctx context.Context, script string, grant []permission.Rule) (string, error) {
	if l := c.s.cfg.Loaded; !l.Trust.Trusted {
		return "", fmt.Errorf("%w: the workspace %s is not trusted, and a command's preludes run only in a trusted one: review it, then rein trust %s",
			ErrPreludeRefused, c.s.ws.Root, c.s.ws.Root)
	}
	if c.Session() == nil {
		if err := c.Create(ctx, &session.Session{}); err != nil {
			return "", err
		}
	}
	var entry *tool.Entry
	if c.tools != nil {
		entry, _ = c.tools.Get("bash")
	}
	if entry == nil {
		return "", fmt.Errorf("%w: this session has no bash tool (a chat workspace, or --disallowed-tools bash)", ErrPreludeRefused)
	}
	input, _ := json.Marshal(map[string]any{"command": script, "timeout": PreludeTimeout.Seconds(), "description": "slash command prelude"})
	call := tool.Call{ID: "prelude_" + session.NewID(), Name: "bash", Input: input, SessionID: c.SessionID(),
		WorkDir: c.s.ws.Root, SessionDir: c.sessDir, Depth: c.s.depth}
	gate := &agent.Gate{Policy: c.granted(grant), Auditor: c.audit, Logger: c.s.logger, Now: c.s.cfg.Now}
	check := agent.Check{Call: call, Origin: entry.Origin, Meta: entry.Meta}
	v, err := gate.Decide(ctx, check)
	if err != nil {
		return "", err
	}
	if v.Decision != agent.Allow {
		gate.Audit(ctx, agent.Audit{Check: check, Decision: agent.Deny, Reason: v.Reason, Rule: v.Rule, By: agent.ByPolicy, Outcome: agent.OutcomeDenied})
		how := "allow it with the command's allowed-tools (Bash(" + firstWord(script) + ":*)) or a permission rule"
		if v.Decision == agent.Deny {
			how = "a deny rule or rein's own checks refuse it"
		}
		return "", fmt.Errorf("%w by the permission policy (%s): %s", ErrPreludeRefused, v.Reason, how)
	}
	ctx, cancel := context.WithTimeout(ctx, PreludeTimeout+10*time.Second)
	defer cancel()
	start := c.s.cfg.Now()
	res, err := entry.Tool.Run(ctx, call)
	if err != nil {
		res = tool.Errorf("%v", err)
	}
	outcome := agent.OutcomeOK
	if res.IsError {
		outcome = agent.OutcomeError
	}
	gate.Audit(ctx, agent.Audit{Check: check, Decision: agent.Allow, Reason: v.Reason, Rule: v.Rule, By: agent.ByPolicy,
		Outcome: outcome, DurationMS: c.s.cfg.Now().Sub(start).Milliseconds()})
	text := res.TextOf()
	if res.IsError && !(exitCode(res) == 1 && noMatchExit(script)) {
		return "", fmt.Errorf("the command failed: %s", strings.ToValidUTF8(text[:min(len(text), maxPreludeError)], ""))
	}
	if exitCode(res) == 1 {
		text = strings.TrimSuffix(strings.TrimRight(text, "\n"), "exit code 1")
	}
	return strings.TrimRight(text, "\n"), nil
}

// exitCode is the exit code a bash result's metadata holds, -1 without.
func exitCode(r tool.Result) int {
	switch v := r.Metadata["exit_code"].(type) {
	case int:
		return v
	case float64:
		return int(v)
	}
	return -1
}

// noMatchExit reports a script whose program says "no match" or "it
// differs" with exit code 1.
func noMatchExit(script string) bool {
	switch firstWord(script) {
	case "grep", "egrep", "fgrep", "rg", "diff", "cmp":
		return true
	}
	return false
}

// firstWord is the first word of a script.
func firstWord(script string) string {
	if f := strings.Fields(script); len(f) > 0 {
		return f[0]
	}
	return ""
}

// SubmitGranted is [Conversation.SubmitMessage] with grant, allow rules
// for this run only (a slash command's allowed-tools, SPEC COMPAT-1): a
// call the policy would ask about runs without asking when they cover it,
// as it would with the rules among the run's own; deny and ask rules, the
// built-in checks and plan and strict mode still come first.
func (c *Conversation) SubmitGranted(ctx context.Context, runID string, prompt *llm.Message, approver permission.Approver, grant []permission.Rule) iter.Seq2[agent.Event, error] {
	return func(yield func(agent.Event, error) bool) {
		c.grant = grant
		defer func() { c.grant = nil }()
		for ev, err := range c.SubmitMessage(ctx, runID, prompt, approver) {
			if !yield(ev, err) {
				return
			}
		}
	}
}

// granted is the policy of the main agent's calls with grant: the gate
// itself without one.
func (c *Conversation) granted(grant []permission.Rule) permission.Policy {
	if len(grant) == 0 {
		return c.s.gate
	}
	with, err := c.s.newPolicy(c.s.policy.Mode(), grant...)
	if err != nil {
		c.s.logger.Warn("a slash command's allowed-tools do not apply", "err", err)
		return c.s.gate
	}
	return &grantPolicy{base: c.s.gate, with: with}
}

// grantPolicy decides as base, but allows what base would ask about when
// with, the same policy with the grant among its rules, allows it.
type grantPolicy struct {
	base, with permission.Policy
}

// Decide implements permission.Policy.
func (g *grantPolicy) Decide(ctx context.Context, req permission.Request) (permission.Outcome, error) {
	o, err := g.base.Decide(ctx, req)
	if err != nil || o.Decision != permission.DecisionAsk {
		return o, err
	}
	wo, err := g.with.Decide(ctx, req)
	if err != nil || wo.Decision != permission.DecisionAllow {
		return o, err
	}
	wo.Reason = "allowed by the slash command's allowed-tools: " + wo.Reason
	return wo, nil
}

// ApprovePlan implements agent.PlanApprover: a command's run in plan
// mode leaves it through the policy beneath the grant.
func (g *grantPolicy) ApprovePlan(a permission.Answer) (permission.Mode, error) {
	pa, ok := g.base.(agent.PlanApprover)
	if !ok {
		return "", fmt.Errorf("the policy has no plan mode to leave")
	}
	return pa.ApprovePlan(a)
}
