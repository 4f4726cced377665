package permission

import (
	"encoding/json"
	"fmt"
	"path"
	"path/filepath"
	"strings"

	"github.com/reinhq/rein/tool"
)

// Plan mode (SPEC PERM-7) is enforced here, not by the prompt: in
// [ModePlan] read tools run inside the workspace, the shell runs only
// commands that read (see [readOnlyShell]) and no network, the one file a
// tool may write is the session's plan file ([PlanFile]), and everything
// else is denied with a reason the model reads. The model ends planning
// with [ExitPlanModeTool]: the policy always asks about it in plan mode —
// no allow rule, hook or earlier "always" answer approves a plan — and
// denies it in every other mode. The answer to that question is the
// user's choice: once approves the plan into default mode, always into
// accept-edits ([Engine.ApprovePlan]), deny sends it back with the
// user's message as feedback.

// ExitPlanModeTool is the name of the tool that presents a plan for
// approval (tool/builtin's exit_plan_mode).
const ExitPlanModeTool = "exit_plan_mode"

// PlanFileName is the plan file's name in the session's directory.
const PlanFileName = "plan.md"

// MaxPlanBytes bounds a plan: a plan longer than this is denied with a
// request for a shorter one (it is shown whole to whoever approves it).
const MaxPlanBytes = 32 << 10

// PlanFile returns the session's plan file, "" without a session
// directory.
func PlanFile(sessionDir string) string {
	if sessionDir == "" {
		return ""
	}
	return filepath.Join(sessionDir, PlanFileName)
}

// PlanOf returns the plan an exit_plan_mode call's input carries.
func PlanOf(input json.RawMessage) string {
	var in struct {
		Plan string `json:"plan"`
	}
	_ = json.Unmarshal(input, &in)
	return in.Plan
}

// IsPlanApproval reports whether r is the call that presents a plan.
func IsPlanApproval(r Request) bool {
	return r.Tool == ExitPlanModeTool && (r.Origin == "" || r.Origin == tool.OriginBuiltin)
}

// ApprovePlan switches the engine out of plan mode by the user's answer
// to exit_plan_mode: once into default mode (edits ask), always into
// accept-edits. It returns the new mode; a deny, or an engine no longer
// in plan mode (the user cycled out meanwhile), changes nothing.
func (e *Engine) ApprovePlan(a Answer) (Mode, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.mode != ModePlan {
		return e.mode, fmt.Errorf("permission: not in plan mode (the mode is %s): no plan to approve", e.mode)
	}
	switch a {
	case AnswerOnce:
		e.mode = ModeDefault
	case AnswerAlways:
		e.mode = ModeAcceptEdits
	default:
		return e.mode, fmt.Errorf("permission: a plan is approved with once or always, not %q", a)
	}
	return e.mode, nil
}

// planTool decides on exit_plan_mode: ask in plan mode (a plan that is
// empty or too long is denied with what to fix), deny in every other.
func (d *decider) planTool() (Outcome, bool) {
	if !IsPlanApproval(d.f.req) {
		return Outcome{}, false
	}
	if d.mode != ModePlan {
		return deny("%s is only for plan mode, and the mode is %s: there is no plan to approve; go on with the task", ExitPlanModeTool, d.mode), true
	}
	plan := strings.TrimSpace(PlanOf(d.f.req.Input))
	switch {
	case plan == "":
		return deny("%s needs the plan: pass its full text (markdown) in plan", ExitPlanModeTool), true
	case len(plan) > MaxPlanBytes:
		return deny("the plan is %d bytes, more than the %d a plan may have: shorten it to the steps, the files and the checks", len(plan), MaxPlanBytes), true
	}
	return ask("plan mode: the plan needs the user's approval (once: approve into default mode; always: approve into accept-edits; deny: keep planning, with feedback)"), true
}

// planDeny is plan mode's part of the built-in denies: what is not a read
// inside the workspace, a read-only command or a write of the plan file.
func (d *decider) planDeny() (Outcome, bool) {
	if d.mode != ModePlan {
		return Outcome{}, false
	}
	tool, m := d.f.req.Tool, d.f.req.Meta
	switch {
	case m.SessionOnly():
		return Outcome{}, false
	case shellTools[tool]:
		if why := d.readOnlyShell(); why != "" {
			return deny("plan mode: %s; only commands that read run until the user approves the plan (exit_plan_mode)", why), true
		}
		return Outcome{}, false
	case d.writesPlanFile():
		return Outcome{}, false
	case !readOnly(m):
		plan := PlanFile(d.f.req.SessionDir)
		if plan == "" {
			plan = "no plan file in this run"
		}
		return deny("plan mode: %s can change things, so it is denied until the user approves the plan; "+
			"the one file you may write is the plan file (%s); present the plan with %s", tool, plan, ExitPlanModeTool), true
	}
	for _, p := range d.f.paths {
		if !p.inside() && p.abs != PlanFile(d.f.req.SessionDir) {
			return deny("plan mode: %s is outside the workspace %s", p.abs, d.f.ws.dir), true
		}
	}
	return Outcome{}, false
}

// writesPlanFile reports an edit tool whose every path is the session's
// plan file.
func (d *decider) writesPlanFile() bool {
	plan := PlanFile(d.f.req.SessionDir)
	if plan == "" || len(d.f.paths) == 0 || d.f.req.Meta.Category != "edit" {
		return false
	}
	for _, p := range d.f.paths {
		if p.abs != filepath.Clean(plan) {
			return false
		}
	}
	return true
}

// planDefault is plan mode's default for what passed the denies: the plan
// file's writes and reads run, the network asks.
func (d *decider) planDefault() Outcome {
	switch {
	case d.writesPlanFile():
		return Outcome{Decision: DecisionAllow, Reason: "plan mode: the plan file is the one file tools may write"}
	case d.f.req.Meta.Category == "network" || d.f.host != "":
		return ask("plan mode asks before %s reaches the network", d.f.req.Tool)
	case shellTools[d.f.req.Tool]:
		return Outcome{Decision: DecisionAllow, Reason: "plan mode runs commands that only read"}
	}
	return Outcome{Decision: DecisionAllow, Reason: "plan mode runs read-only tools inside the workspace"}
}

// readOnlyPrograms are the programs plan mode's shell runs: they read
// files and print, and reach no network. env and printenv are not among
// them (they would print the environment's secrets), nor tree and file
// (-o, -C write files). Their options that write, read
// arbitrary files or run programs (sort -o, find -exec, sed -i or w, awk
// system) are escalations and deny (see [escalationsIn]).
var readOnlyPrograms = map[string]bool{
	"cat": true, "head": true, "tail": true, "ls": true, "wc": true, "stat": true, "du": true, "df": true,
	"realpath": true, "readlink": true, "basename": true, "dirname": true, "pwd": true, "echo": true,
	"printf": true, "true": true, "false": true, "test": true, "[": true, "which": true, "type": true,
	"grep": true, "egrep": true, "fgrep": true, "rg": true, "find": true, "sort": true, "cut": true, "tr": true,
	"nl": true, "diff": true, "cmp": true, "comm": true, "sed": true, "awk": true, "gawk": true, "mawk": true,
	"jq": true, "sha256sum": true, "sha1sum": true, "md5sum": true, "od": true, "hexdump": true, "column": true,
	"fold": true, "expand": true, "rev": true, "uname": true, "whoami": true, "id": true,
	"git": true, "cd": true, "uniq": true, "xxd": true,
}

// readOnlyWrappers are the wrappers plan mode lets run a read-only program.
var readOnlyWrappers = map[string]bool{"env": true, "timeout": true, "nice": true, "time": true, "command": true, "xargs": true}

// gitReads are git's subcommands that only read the repository.
var gitReads = map[string]bool{
	"status": true, "log": true, "diff": true, "show": true, "blame": true, "ls-files": true, "ls-tree": true,
	"rev-parse": true, "grep": true, "describe": true, "shortlog": true, "cat-file": true, "rev-list": true,
}

// readOnlyShell returns why the command is not one plan mode runs, ""
// when every command of it only reads: it parses and is judged from its
// text, each program (and each wrapper around it) is a reader, none has an
// option that writes or runs, writes to files go nowhere but
// /dev/null and the like, and no assignment changes what runs.
func (d *decider) readOnlyShell() string {
	s := d.f.shell
	switch {
	case s == nil:
		return fmt.Sprintf("the command cannot be checked (%v)", d.f.shellErr)
	case s.Dynamic != "":
		return s.Dynamic
	case len(s.Commands) == 0:
		return "the command runs nothing rein can check"
	}
	for _, a := range s.Assigns {
		if riskyEnv(a) {
			return fmt.Sprintf("it sets %s, which changes what runs", a.Name)
		}
	}
	for _, r := range s.Redirs {
		if !r.Write {
			continue
		}
		ps, known := d.f.wordPaths(r.Target)
		if !known {
			return fmt.Sprintf("it writes to %s", r.Target.Text)
		}
		for _, p := range ps {
			if !harmlessDevice(p.abs) {
				return fmt.Sprintf("it writes to %s", p.abs)
			}
		}
	}
	for _, c := range d.f.commands() {
		if why := readOnlyCommand(c); why != "" {
			return why
		}
	}
	return ""
}

// readOnlyCommand returns why one command is not a read, "" when it is.
func readOnlyCommand(c *command) string {
	if c.Via != "" {
		return fmt.Sprintf("%s runs another command", c.Via)
	}
	if c.prog == "" {
		if len(c.Words) > 0 && c.Words[0].Static {
			return fmt.Sprintf("%s is not a command that only reads", path.Base(c.Words[0].Value))
		}
		return "its program is known only when it runs"
	}
	layers := c.Layers()
	for i, l := range layers {
		if len(l.Words) == 0 || !l.Words[0].Static {
			return "its program is known only when it runs"
		}
		name := path.Base(l.Words[0].Value)
		if i < len(layers)-1 && !readOnlyWrappers[name] {
			return fmt.Sprintf("%s runs other commands", name)
		}
	}
	if !readOnlyPrograms[c.prog] {
		return fmt.Sprintf("%s is not a command that only reads", c.prog)
	}
	if len(c.esc) > 0 {
		return fmt.Sprintf("%s %s %s", c.prog, c.esc[0].opt, c.esc[0].eff)
	}
	switch c.prog {
	case "git":
		if sub := gitSub(c.inner[1:]); !gitReads[sub] {
			return fmt.Sprintf("git %s may change the repository or reach the network", sub)
		}
	case "uniq":
		if operands(c.inner[1:]) > 1 {
			return "uniq with two files writes the second"
		}
	}
	return ""
}

// operands counts the words that are not options.
func operands(ws []word) int {
	n := 0
	for _, w := range ws {
		if !strings.HasPrefix(w.Value, "-") || w.Value == "-" {
			n++
		}
	}
	return n
}
