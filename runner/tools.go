package runner

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/reinhq/rein/exec"
	"github.com/reinhq/rein/permission"
	"github.com/reinhq/rein/tool"
	"github.com/reinhq/rein/tool/builtin"
	"github.com/reinhq/rein/tool/memorytool"
	"github.com/reinhq/rein/workspace"
)

// buildTools builds the session's tools (SPEC TOOL-3): the file tools
// sharing one read tracker, bash journaling the process group of each
// command, the search tools, web_fetch, web_search (on the backend the
// environment configures, see builtin.SearchFromEnv; a "not configured"
// result without one), todo_write and ask_user. Tools a bare --disallowed-tools names are left
// out. The order is fixed: the tool list is part of the prompt-cache prefix.
func (c *Conversation) buildTools() error {
	backend, err := c.s.backend(c.sessDir)
	if err != nil {
		return err
	}
	if c.s.cfg.NoTools {
		c.tools = nil
		return nil
	}
	rec, logger := c.rec, c.s.logger
	fence := c.s.cfg.Tenancy.fence(c.s.ws.Root)
	// A command may ask to run outside the sandbox, each time approved
	// (SPEC TOOL-7); never a server caller's.
	var outside exec.Backend
	if c.s.cfg.Tenancy == nil && backend.Name() != "local" {
		outside = &exec.Local{SpillDir: c.sessDir}
	}
	// Claude Code's env settings reach the commands, screened and trust-gated
	// by package workspace (SPEC COMPAT-1, PERM-5).
	var bashEnv func(tool.Call) []string
	if env := c.s.cfg.Loaded.ClaudeEnv(); len(env) > 0 {
		bashEnv = func(tool.Call) []string { return slices.Clone(env) }
	}
	c.jobs = c.newJobs()
	bash := builtin.NewBash(backend, builtin.BashOptions{Fence: fence, Env: bashEnv, Unsandboxed: outside, OnStart: func(call tool.Call, pgid int) {
		if err := rec.RecordProcess(call.ID, pgid); err != nil {
			logger.Warn("could not journal a command's process group", "tool", call.Name, "err", err)
		}
	}, Jobs: c.jobs, BackgroundOnTimeout: c.s.ev.String(workspace.BackgroundOnTimeout) == "on"})
	search, _, err := builtin.SearchFromEnv(c.s.cfg.Getenv, nil)
	if err != nil {
		c.s.note("web_search is off: %v", err)
	}
	files := backend
	if c.s.cfg.Tenancy == nil {
		files = withFiles(backend, c.files, c.s.ws.Root, logger)
	}
	all := append(builtin.FileTools(files, c.tracker, fence),
		builtin.NewListDir(builtin.ListDirOptions{Fence: fence}), builtin.NewGlob(builtin.GlobOptions{Fence: fence}),
		builtin.NewGrep(builtin.GrepOptions{Fence: fence}), bash,
		builtin.NewTodoWrite(c.todos), builtin.NewWebFetch(builtin.WebFetchOptions{UserAgent: c.s.cfg.UserAgent}),
		builtin.NewWebSearch(search), builtin.NewAskUser(nil))
	if c.s.memory != nil {
		all = append(all, memorytool.New(c.s.memory))
	}
	if c.kb = c.s.kbTool(); c.kb != nil {
		all = append(all, c.kb)
	}
	kept := all[:0]
	for _, t := range all {
		if name := t.Spec().Name; !slices.Contains(c.s.cfg.Hidden, name) && allows(c.s.main, name) {
			kept = append(kept, t)
		}
	}
	// The job tools come with bash, unless hidden by name.
	kept = slices.DeleteFunc(c.jobTools(kept), func(t tool.Tool) bool { return slices.Contains(c.s.cfg.Hidden, t.Spec().Name) })
	set, err := tool.NewSet(tool.OriginBuiltin, kept...)
	if err != nil {
		return err
	}
	if err := c.addDeclaredTools(set, backend); err != nil {
		return err
	}
	c.tools = set
	return nil
}

// backend returns where commands run (SPEC TOOL-5), by the sandbox
// settings (SPEC TOOL-7, see exec.PolicyOf): off runs on the host; on and
// read-only require bubblewrap; workspace (auto) uses bubblewrap where it
// runs, else Landlock alone where the kernel has it (weaker: see
// exec.Confined), else the host, each fallback said loudly. Under
// bubblewrap, Landlock is a second layer when the kernel has it, and
// sensitive files are hidden; the session's temporary directory is
// sessDir/tmp. A server's runs (Config.Tenancy) ignore the setting: see
// [Setup.tenantBackend]. Long output spills into sessDir, the session's
// directory.
func (s *Setup) backend(sessDir string) (exec.Backend, error) {
	local := exec.Local{SpillDir: sessDir}
	if s.cfg.Tenancy != nil {
		return s.tenantBackend(local, sessDir)
	}
	pol, err := s.sandboxPolicy()
	if err != nil {
		return nil, err
	}
	if pol.Profile == exec.ProfileOff {
		return &local, nil
	}
	helper := exec.SelfHelper()
	sb := &exec.Sandbox{Workspace: s.ws.Root, Local: local, Landlock: helper, ProbeCache: s.probeCache(),
		Hide: s.sandboxHide(), HidePaths: append(homeCredentials(s.cfg.Loaded.Paths.Home), s.cfg.Loaded.Paths.ProfilesFile())}
	if sessDir != "" {
		sb.TempDir = filepath.Join(sessDir, "tmp")
	}
	if err := pol.Configure(sb, s.cfg.Loaded.Paths.Home, s.cfg.Getenv); err != nil {
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	err = sb.Available()
	switch {
	case err == nil:
		return sb, nil
	case pol.Required:
		return nil, fmt.Errorf("sandbox: %w", err)
	case exec.LandlockABI() > 0:
		s.note("sandbox: weaker than profile %s: bubblewrap cannot run (%s), so commands run under Landlock only; rein doctor says what that leaves open",
			pol.Profile, sandboxReason(err))
		return &exec.Confined{Workspace: s.ws.Root, Writable: append(sb.Writable, sb.Caches.Dirs...), AllowNetwork: sb.AllowNetwork, Local: local}, nil
	}
	s.note("sandbox: none, not profile %s: neither bubblewrap (%s) nor Landlock can run, so commands run unconfined; install bubblewrap, or set sandbox: off",
		pol.Profile, sandboxReason(err))
	return &local, nil
}

// sandboxReason is why bubblewrap cannot run, without the advice
// [exec.ErrNoSandbox] gives for a required sandbox: "bwrap not found in
// PATH".
func sandboxReason(err error) string {
	msg := err.Error()
	if rest, ok := strings.CutPrefix(msg, exec.ErrNoSandbox.Error()); ok {
		msg = strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(rest), "("), ")")
	}
	return msg
}

// sandboxPolicy is the sandbox the settings ask for (SPEC TOOL-7).
func (s *Setup) sandboxPolicy() (exec.Policy, error) {
	pol, err := exec.PolicyOf(s.ev.String(workspace.Sandbox), s.ev.String(workspace.SandboxNetwork),
		workspace.SplitList(s.ev.String(workspace.SandboxAllowHosts)), s.ev.String(workspace.SandboxCaches),
		workspace.SplitList(s.ev.String(workspace.SandboxWritable)))
	if err != nil {
		return exec.Policy{}, fmt.Errorf("sandbox: %w", err)
	}
	return pol, nil
}

// sandboxed reports whether commands will run under bubblewrap, which
// hides the workspace's sensitive files (see backend): the policy then
// lets a recursive read of the workspace run (SPEC PERM-2).
func (s *Setup) sandboxed() bool {
	probe := &exec.Sandbox{ProbeCache: s.probeCache()}
	if s.cfg.Tenancy != nil {
		return probe.Available() == nil
	}
	return s.ev.String(workspace.Sandbox) != string(exec.ProfileOff) && probe.Available() == nil
}

// probeCache is the file that remembers, across runs, that bubblewrap
// works here (see exec.Sandbox.ProbeCache): its probe was ~10 ms of each
// run's start (issue 30, CLI-1). "" without a data directory.
func (s *Setup) probeCache() string {
	if dir := s.cfg.Loaded.Paths.DataDir; filepath.IsAbs(dir) {
		return filepath.Join(dir, "bwrap-probe")
	}
	return ""
}

// sandboxHide reports the files the sandbox hides: the sensitive files of
// the permission policy — the defaults, the user's sensitive_files and the
// workspace's additions; a workspace's exceptions only once it is trusted
// (SPEC PERM-5).
func (s *Setup) sandboxHide() func(path string) bool {
	patterns := append(slices.Clone(tool.DefaultSensitiveFiles), s.cfg.Loaded.Permissions(permission.Settings{}).SensitiveFiles...)
	set := tool.NewSensitiveSet(patterns)
	return func(path string) bool {
		_, ok := set.Match(path)
		return ok
	}
}

// homeCredentials are the credential files of the user's home the sandbox
// hides when they exist: keys, cloud and registry tokens, other agents'
// logins. (rein's own profiles, which may hold api_key, are hidden too.)
func homeCredentials(home string) []string {
	if home == "" {
		return nil
	}
	var out []string
	for _, rel := range []string{
		".ssh", ".gnupg", ".aws", ".azure", ".config/gcloud", ".kube/config", ".docker/config.json",
		".netrc", ".git-credentials", ".config/gh/hosts.yml", ".npmrc", ".pypirc", ".cargo/credentials.toml",
		".claude/.credentials.json", ".codex/auth.json",
	} {
		out = append(out, filepath.Join(home, filepath.FromSlash(rel)))
	}
	return out
}
