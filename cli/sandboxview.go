package cli

import (
	"strings"

	"github.com/reinhq/rein/exec"
	"github.com/reinhq/rein/workspace"
)

// sandboxPolicy resolves the sandbox a run of l gets (SPEC TOOL-7) and
// describes it, a line each; the same for `rein doctor` and /sandbox.
func sandboxPolicy(l *workspace.Loaded) (exec.Policy, []string, error) {
	ev := l.Effective
	pol, err := exec.PolicyOf(ev.String(workspace.Sandbox), ev.String(workspace.SandboxNetwork),
		workspace.SplitList(ev.String(workspace.SandboxAllowHosts)), ev.String(workspace.SandboxCaches),
		workspace.SplitList(ev.String(workspace.SandboxWritable)))
	if err != nil {
		return exec.Policy{}, nil, err
	}
	sb := &exec.Sandbox{Workspace: l.Workspace.Root, TempDir: "the session's tmp directory", Writable: pol.Writable}
	lines := pol.Describe(sb)
	if pol.Profile != exec.ProfileOff && pol.Network != exec.NetworkOn && len(pol.AllowHosts) == 0 {
		lines = append(lines, "to widen: sandbox.allow_hosts (e.g. [registries]) for the network, sandbox.writable for directories, sandbox.caches: isolated to keep your caches apart")
	}
	return pol, lines, nil
}

// sandboxText is /sandbox: the policy of this session's commands, and
// where each setting came from.
func (e *engine) sandboxText() (string, error) {
	_, lines, err := sandboxPolicy(e.cfg)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	b.WriteString("**Sandbox** (SPEC TOOL-7)\n\n")
	for _, l := range lines {
		b.WriteString("- " + l + "\n")
	}
	b.WriteString("\nSettings:\n\n")
	for _, k := range []string{workspace.Sandbox, workspace.SandboxNetwork, workspace.SandboxAllowHosts, workspace.SandboxCaches, workspace.SandboxWritable} {
		v := e.cfg.Effective.Get(k)
		val := strings.ReplaceAll(v.Value, "\n", ", ")
		if val == "" {
			val = "(none)"
		}
		from := string(v.Source)
		if v.Origin != "" {
			from += " " + v.Origin
		}
		b.WriteString("- `" + k + "`: " + val + " — from " + from + "\n")
	}
	return b.String(), nil
}
