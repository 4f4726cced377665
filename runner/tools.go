package runner

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sync"

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
func (e *Engine) buildTools() error {
	backend, err := e.backend()
	if err != nil {
		return err
	}
	if e.cfg.NoTools {
		e.tools = nil
		return nil
	}
	rec := e.rec
	fence := e.cfg.Tenancy.fence(e.ws.Root)
	// A command may ask to run outside the sandbox, each time approved
	// (SPEC TOOL-7); never a server caller's.
	var outside exec.Backend
	if e.cfg.Tenancy == nil && backend.Name() != "local" {
		outside = &exec.Local{SpillDir: e.sessDir}
	}
	bash := builtin.NewBash(backend, builtin.BashOptions{Fence: fence, Unsandboxed: outside, OnStart: func(c tool.Call, pgid int) {
		if err := rec.RecordProcess(c.ID, pgid); err != nil {
			e.logger.Warn("could not journal a command's process group", "tool", c.Name, "err", err)
		}
	}})
	search, _, err := builtin.SearchFromEnv(e.cfg.Getenv, nil)
	if err != nil {
		e.note("web_search is off: %v", err)
	}
	all := append(builtin.FileTools(backend, e.tracker, fence),
		builtin.NewListDir(builtin.ListDirOptions{Fence: fence}), builtin.NewGlob(builtin.GlobOptions{Fence: fence}),
		builtin.NewGrep(builtin.GrepOptions{Fence: fence}), bash,
		builtin.NewTodoWrite(e.todos), builtin.NewWebFetch(builtin.WebFetchOptions{UserAgent: e.cfg.UserAgent}),
		builtin.NewWebSearch(search), builtin.NewAskUser(&e.asker))
	if e.memory != nil {
		all = append(all, memorytool.New(e.memory))
	}
	if e.kb = e.kbTool(); e.kb != nil {
		all = append(all, e.kb)
	}
	kept := all[:0]
	for _, t := range all {
		if name := t.Spec().Name; !slices.Contains(e.cfg.Hidden, name) && allows(e.main, name) {
			kept = append(kept, t)
		}
	}
	set, err := tool.NewSet(tool.OriginBuiltin, kept...)
	if err != nil {
		return err
	}
	if err := e.addDeclaredTools(set, backend); err != nil {
		return err
	}
	e.tools = set
	return nil
}

// backend returns where commands run (SPEC TOOL-5), by the sandbox
// settings (SPEC TOOL-7, see exec.PolicyOf): off runs on the host; on and
// read-only require bubblewrap; workspace (auto) uses bubblewrap where it
// runs, else Landlock alone where the kernel has it (weaker: see
// exec.Confined), else the host, each fallback said loudly. Under
// bubblewrap, Landlock is a second layer when the kernel has it, and
// sensitive files are hidden. A server's runs (Config.Tenancy) ignore the
// setting: see [Engine.tenantBackend].
func (e *Engine) backend() (exec.Backend, error) {
	local := exec.Local{SpillDir: e.sessDir}
	if e.cfg.Tenancy != nil {
		return e.tenantBackend(local)
	}
	pol, err := e.sandboxPolicy()
	if err != nil {
		return nil, err
	}
	if pol.Profile == exec.ProfileOff {
		return &local, nil
	}
	helper := exec.SelfHelper()
	sb := &exec.Sandbox{Workspace: e.ws.Root, Local: local, Landlock: helper,
		Hide: e.sandboxHide(), HidePaths: append(homeCredentials(e.cfg.Loaded.Paths.Home), e.cfg.Loaded.Paths.ProfilesFile())}
	if e.sessDir != "" {
		sb.TempDir = filepath.Join(e.sessDir, "tmp")
	}
	if err := pol.Configure(sb, e.cfg.Loaded.Paths.Home, e.cfg.Getenv); err != nil {
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	err = sb.Available()
	switch {
	case err == nil:
		return sb, nil
	case pol.Required:
		return nil, fmt.Errorf("sandbox: %w", err)
	case exec.LandlockABI() > 0:
		e.note("sandbox: bubblewrap cannot run here (%v); commands run under Landlock only: writes stay in the workspace and the toolchain caches, "+
			"but .git, .rein and .claude inside it are not read-only, sensitive files are not hidden, and the network allow-list cannot apply (network off unless sandbox.network: on)", err)
		return &exec.Confined{Workspace: e.ws.Root, Writable: append(sb.Writable, sb.Caches.Dirs...), AllowNetwork: sb.AllowNetwork, Local: local}, nil
	}
	e.note("sandbox: neither bubblewrap nor Landlock can run here (%v); commands run on the host, unconfined. "+
		"Install bubblewrap (apt-get install bubblewrap), or set sandbox: off to silence this", err)
	return &local, nil
}

// sandboxPolicy is the sandbox the settings ask for (SPEC TOOL-7).
func (e *Engine) sandboxPolicy() (exec.Policy, error) {
	pol, err := exec.PolicyOf(e.ev.String(workspace.Sandbox), e.ev.String(workspace.SandboxNetwork),
		workspace.SplitList(e.ev.String(workspace.SandboxAllowHosts)), e.ev.String(workspace.SandboxCaches),
		workspace.SplitList(e.ev.String(workspace.SandboxWritable)))
	if err != nil {
		return exec.Policy{}, fmt.Errorf("sandbox: %w", err)
	}
	return pol, nil
}

// sandboxed reports whether commands will run under bubblewrap, which
// hides the workspace's sensitive files (see backend): the policy then
// lets a recursive read of the workspace run (SPEC PERM-2).
func (e *Engine) sandboxed() bool {
	if e.cfg.Tenancy != nil {
		return (&exec.Sandbox{}).Available() == nil
	}
	return e.ev.String(workspace.Sandbox) != string(exec.ProfileOff) && (&exec.Sandbox{}).Available() == nil
}

// sandboxHide reports the files the sandbox hides: the sensitive files of
// the permission policy — the defaults, the user's sensitive_files and the
// workspace's additions; a workspace's exceptions only once it is trusted
// (SPEC PERM-5).
func (e *Engine) sandboxHide() func(path string) bool {
	patterns := append(slices.Clone(tool.DefaultSensitiveFiles), e.cfg.Loaded.Permissions(permission.Settings{}).SensitiveFiles...)
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

// askerBox is the ask_user tool's asker: whoever drives the current run.
type askerBox struct {
	mu sync.Mutex
	a  builtin.Asker
}

func (b *askerBox) set(a builtin.Asker) {
	b.mu.Lock()
	b.a = a
	b.mu.Unlock()
}

// Ask implements builtin.Asker.
func (b *askerBox) Ask(ctx context.Context, q string, options []string) (string, error) {
	b.mu.Lock()
	a := b.a
	b.mu.Unlock()
	if a == nil {
		return "", errors.New("no user can be asked in this session")
	}
	return a.Ask(ctx, q, options)
}
