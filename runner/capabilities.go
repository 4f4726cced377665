package runner

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/reinhq/rein/exec"
	"github.com/reinhq/rein/hook"
	"github.com/reinhq/rein/tool"
	"github.com/reinhq/rein/tool/action"
	"github.com/reinhq/rein/tool/mcptool"
	"github.com/reinhq/rein/tool/skill"
	"github.com/reinhq/rein/workspace"
)

// This file turns what the workspace and the user declare — skills,
// actions, MCP servers (SPEC SKILL-1, ACTION-1, MCP-1) — into tools. The
// definitions come from workspace.Loaded.Definitions, which leaves out an
// untrusted workspace's (PERM-5).

// addDeclaredTools adds, after the built-ins: the skill tool when there
// are skills, one tool per action, and the tools of the MCP servers, each
// under its origin, in a fixed order (the tool list is part of the
// prompt-cache prefix).
func (c *Conversation) addDeclaredTools(set *tool.Set, backend exec.Backend) error {
	defs := c.s.cfg.Loaded.Definitions()
	if skills := c.s.skills(); len(skills) > 0 && allows(c.s.main, skill.ToolName) {
		if err := set.Add(tool.OriginSkill, skill.NewTool(skills, c.skillVars)); err != nil {
			return err
		}
	}
	for _, a := range defs.Actions {
		if !allows(c.s.main, a.Name) {
			continue
		}
		t, err := action.New(action.Action{Name: a.Name, Description: a.Description, InputSchema: a.InputSchema,
			Args: actionArgs(a), Script: a.Script, Dir: a.Dir, Timeout: a.Timeout, Env: c.s.actionEnv(a)}, backend)
		if err != nil {
			c.s.note("action %s (%s) left out: %v", a.Name, a.Path, err)
			continue
		}
		if err := set.Add(tool.OriginAction, t); err != nil {
			c.s.note("action %s (%s) left out: %v", a.Name, a.Path, err)
		}
	}
	if m := c.s.mcpManager(); m != nil {
		c.s.addMCPTools(set, m)
	}
	return nil
}

// skills are the skills that apply, for the tool and the index.
func (s *Setup) skills() []skill.Skill {
	defs := s.cfg.Loaded.Definitions().Skills
	out := make([]skill.Skill, 0, len(defs))
	for _, s := range defs {
		out = append(out, skill.Skill{Name: s.Name, Description: s.Description, AllowedTools: s.AllowedTools,
			Dir: s.Dir, Body: s.Body})
	}
	return out
}

// skillIndex is the skills' part of the system prompt: names and
// descriptions only (SKILL-1); "" when the model gets no skill tool.
func (s *Setup) skillIndex() string {
	if s.cfg.NoTools || !allows(s.main, skill.ToolName) {
		return ""
	}
	return skill.Index(s.skills())
}

// skillVars are the substitutions of a skill's body (SKILL-2): ${env:X}
// only for the variables the user's settings list (skills.env) — a cloned
// repository's skill cannot pull secrets into the prompt — ${config:X}
// from the resolved settings, and ${runtime:X}.
func (c *Conversation) skillVars(s skill.Skill) skill.Vars {
	allowed := c.s.cfg.Loaded.SkillEnv()
	return skill.Vars{
		Env: func(name string) (string, bool) {
			for _, a := range allowed {
				if a == name {
					v := c.s.cfg.Getenv(name)
					return v, v != ""
				}
			}
			return "", false
		},
		Config: func(key string) (string, bool) {
			if _, ok := workspace.Lookup(key); !ok {
				return "", false
			}
			return c.s.ev.String(key), true
		},
		Runtime: map[string]string{"session_id": c.SessionID(), "workspace": c.s.ws.Root, "skill_dir": s.Dir,
			"skill_name": s.Name, "os": runtime.GOOS, "date": c.s.cfg.Now().Format(time.DateOnly)},
	}
}

// actionArgs is an action's argv with a program written as a relative
// path (./deploy.sh, bin/run) found in the action's directory, beside its
// ACTION.yaml; the command still runs in the workspace.
func actionArgs(a workspace.Action) []string {
	if len(a.Command) == 0 || filepath.IsAbs(a.Command[0]) || !strings.Contains(a.Command[0], "/") {
		return a.Command
	}
	args := slices.Clone(a.Command)
	args[0] = filepath.Join(a.Dir, args[0])
	return args
}

// actionEnv is what an action's command gets besides the backend's base
// environment: the variables its definition names, and the depth of a rein
// it starts (DepthEnv), so a sub-agent reached through an action counts.
func (s *Setup) actionEnv(a workspace.Action) []string {
	env := []string{DepthEnv + "=" + strconv.Itoa(s.depth+1)}
	for _, name := range a.Env {
		if v := s.cfg.Getenv(name); v != "" {
			env = append(env, name+"="+v)
		}
	}
	return env
}

// MCPServer is what mcptool connects to for a definition: a stdio server
// gets a clean environment (hook.CleanEnv: the base variables, not rein's
// keys), the variables its definition sets, and the depth (DepthEnv) of a
// process this one starts.
func MCPServer(def workspace.MCPServer, getenv func(string) string, depth int) mcptool.Server {
	s := mcptool.Server{Name: def.Name, URL: def.URL, Headers: def.Headers, SSE: def.Transport == "sse", CallTimeout: def.Timeout}
	if def.URL != "" {
		return s
	}
	extra := []string{DepthEnv + "=" + strconv.Itoa(depth+1)}
	for k, v := range def.Env {
		extra = append(extra, k+"="+v)
	}
	s.Command, s.Args = def.Command, def.Args
	s.Env = hook.CleanEnv(getenv, nil, extra...)
	return s
}

// mcpServers are the enabled MCP servers of the definitions; a stdio
// server starts in the workspace's directory.
func (s *Setup) mcpServers() []mcptool.Server {
	var out []mcptool.Server
	s.mcp.mu.Lock()
	defs := append(slices.Clone(s.cfg.Loaded.Definitions().MCP), s.mcp.extra...)
	s.mcp.mu.Unlock()
	for _, d := range defs {
		if !d.Disabled {
			srv := MCPServer(d, s.cfg.Getenv, s.depth)
			if srv.Command != "" {
				srv.Dir = s.ws.Root
			}
			out = append(out, srv)
		}
	}
	return out
}

// toolTimeout is the per-call timeout the settings give a tool
// (tools.timeouts, SPEC TOOL-2).
func (s *Setup) toolTimeout(name string, _ tool.Origin) time.Duration {
	return s.cfg.Loaded.ToolTimeout(name)
}

// mcpConn is a setup's connection to its MCP servers: made once, on
// the first conversation's tools, and shared by every conversation and
// every Setup WithModel derives.
type mcpConn struct {
	once sync.Once
	// mu guards extra, the servers a front's client added
	// (AddMCPServers), and started, set once they connect.
	mu      sync.Mutex
	extra   []workspace.MCPServer
	started bool
	m       *mcptool.Manager
	own     bool // started by the setup, not taken from a pool
	// warnings are what run_start reports of the servers: those that did
	// not start, those withheld for review.
	warnings []string
}

// close stops the servers the setup started.
func (c *mcpConn) close() error {
	if c.own {
		return c.m.Close()
	}
	return nil
}

// mcpManager connects to the MCP servers once per setup, or takes the
// shared connections of Config.MCP; nil without servers or without tools.
func (s *Setup) mcpManager() *mcptool.Manager {
	c := s.mcp
	c.once.Do(func() {
		c.mu.Lock()
		c.started = true
		c.mu.Unlock()
		servers := s.mcpServers()
		if len(servers) == 0 || s.cfg.NoTools || !s.mayUseMCP() {
			return
		}
		reviews := s.mcpReviews()
		if s.cfg.MCP != nil {
			c.m = s.cfg.MCP.Get(servers, s.logger, reviews.Accepted)
		} else {
			c.m = mcptool.Start(context.Background(), servers, mcptool.Options{Logger: s.logger, ClientName: "rein",
				Screen: ScreenText, Accepted: reviews.Accepted})
			c.own = true
		}
		for _, st := range c.m.Status() {
			if st.State == mcptool.StateFailed {
				msg := fmt.Sprintf("MCP server %s did not start: %s; its tools are left out (rein mcp test %s shows more)", st.Server, st.Err, st.Server)
				c.warnings = append(c.warnings, msg)
				s.note("%s", msg)
			}
			if msg := s.withheld(reviews, st); msg != "" {
				c.warnings = append(c.warnings, msg)
			}
		}
	})
	return c.m
}

// mayUseMCP reports whether the main agent may call any MCP tool: an
// agent whose tools name none starts no server.
func (s *Setup) mayUseMCP() bool {
	if s.main == nil || s.main.Tools == nil {
		return true
	}
	for _, p := range toolPatterns(s.main.Tools) {
		if strings.HasPrefix(p, "mcp") || strings.HasPrefix(p, "*") {
			return true
		}
	}
	return false
}

// MCPStatus reports the state of the setup's MCP servers (nil before the
// first session is bound, or without servers).
func (s *Setup) MCPStatus() []mcptool.Status {
	if s.mcp.m == nil {
		return nil
	}
	return s.mcp.m.Status()
}

// MCPPool shares MCP connections among the setups of a long-lived
// process (the server builds a setup per run): one manager per distinct
// set of servers, started on first use, kept until Close.
type MCPPool struct {
	mu       sync.Mutex
	managers map[string]*mcptool.Manager
}

// Get returns the manager of servers, starting it on first use; accepted
// is mcptool.Options.Accepted.
func (p *MCPPool) Get(servers []mcptool.Server, logger *slog.Logger, accepted func(server, hash string) bool) *mcptool.Manager {
	key := poolKey(servers)
	p.mu.Lock()
	defer p.mu.Unlock()
	if m, ok := p.managers[key]; ok {
		return m
	}
	if p.managers == nil {
		p.managers = map[string]*mcptool.Manager{}
	}
	m := mcptool.Start(context.Background(), servers, mcptool.Options{Logger: logger, ClientName: "rein",
		Screen: ScreenText, Accepted: accepted})
	p.managers[key] = m
	return m
}

// Close stops every server the pool started.
func (p *MCPPool) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	var first error
	for k, m := range p.managers {
		if err := m.Close(); err != nil && first == nil {
			first = err
		}
		delete(p.managers, k)
	}
	return first
}

// poolKey identifies a set of servers by everything that starts them.
func poolKey(servers []mcptool.Server) string {
	b, err := json.Marshal(servers)
	if err != nil {
		panic(fmt.Sprintf("runner: MCP servers do not marshal: %v", err))
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
