// Package workspace loads what a workspace declares — AGENTS.md and .rein/
// (SPEC WS-1) — with the user's own configuration, the same way for every
// front (the CLI, the server, the gateway).
//
// Settings resolve from their layers (SPEC WS-3), highest first: run
// flags, the environment (REIN_*), the workspace's .rein/settings.yaml,
// the user's ~/.config/rein/settings.yaml, and built-in defaults.
//
// Every setting is a [Key]: a dotted name as written in the YAML files
// ("permissions.mode"), the REIN_* variable and the flag that set it, a kind
// that validates it, and a default. A [Layer] holds the values one source
// gives; [Resolve] picks, for each key, the value of the highest layer that
// sets it and remembers where it came from, so `rein config show` can say so.
// Permission rules (allow, ask, deny lists) are not single values: they add
// up across layers and are read by package permission from the same files.
//
// Agents, skills, actions and MCP servers — built-in, the user's and the
// workspace's, Claude Code's formats included — are read by
// [LoadDefinitions] and merged by name ([Loaded.Definitions]); see
// docs/workspace.md.
//
// Files are read by [ParseSettings] (settings.yaml), [ParseProfiles]
// (config.yaml, the provider profiles of `rein provider`) and [LoadModels]
// (.rein/models.yaml). [Load] reads every file of a workspace and the user,
// with the environment and flags, into a [Loaded].
//
// A workspace may only tighten the user's safety (SPEC PERM-5): its
// permission mode and sandbox are [Guarded], and what it brings that
// widens permissions, runs code or shapes the prompt — allow rules,
// sensitive-file exceptions, hooks, a sessions_dir, a replay: model,
// system_prompt and append_system_prompt, MCP servers, agents, skills and
// actions (each an [Extra]) — applies only once the user trusted it. Trust
// is kept per directory in the user's trust.json ([TrustStore]) with a
// [Fingerprint] of the workspace's trust-relevant files and of the files
// its declarations run ([FingerprintFiles]), and is lost when any changes;
// [Loaded.RuleStore] keeps "always" answers without losing it. Trusted or
// not, a workspace's declarations never receive rein's credentials
// ([Loaded.Credential]).
package workspace

import (
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/reinhq/rein/permission"
)

// Kind is the type of a key's value.
type Kind uint8

// The kinds of value.
const (
	KindString   Kind = iota // any text
	KindInt                  // a whole number ≥ 0
	KindDuration             // "90s", "5m", or seconds ("300"); 0 means none
	KindEnum                 // one of Key.Enum
	KindMode                 // a permission mode (permission.ParseMode)
	KindFloat                // a number ≥ 0, such as 0.5
	KindList                 // a list: a YAML sequence, or Key.Sep-separated text; kept one item a line
)

// Key is one setting.
type Key struct {
	// Name is the setting's dotted path in the YAML files.
	Name string
	// Env is the variable that sets it; Flag the command-line flag, if any.
	Env, Flag string
	// Default is the built-in value ("" for none).
	Default string
	Kind    Kind
	// Enum lists the accepted values of a KindEnum key.
	Enum []string
	// Min is the least value of a KindInt key.
	Min int
	// Doc says what the setting does, for `rein config show` and the docs.
	Doc string
	// Sep separates the items of a KindList key written as text (the
	// REIN_* variable, a flag); Item, when set, checks and normalises one.
	Sep  string
	Item func(string) (string, error)
}

// The setting names, for callers.
const (
	Model              = "model"
	PermissionMode     = "permissions.mode"
	AskTimeout         = "permissions.ask_timeout"
	MaxTurns           = "max_turns"
	Timeout            = "timeout"
	MaxTokens          = "max_tokens"
	ThinkingBudget     = "thinking_budget"
	Sandbox            = "sandbox"
	SandboxNetwork     = "sandbox.network"
	SandboxAllowHosts  = "sandbox.allow_hosts"
	SandboxCaches      = "sandbox.caches"
	SandboxWritable    = "sandbox.writable"
	SystemPrompt       = "system_prompt"
	AppendSystemPrompt = "append_system_prompt"
	SessionsDir        = "sessions_dir"
	WorkspaceKind      = "kind"
	SubagentMaxDepth   = "subagents.max_depth"
	SubagentMaxTokens  = "subagents.max_tokens"
	SubagentMaxCost    = "subagents.max_cost"
	Memory             = "memory"
	KBEmbeddingModel   = "kb.embedding_model"
	MCPMaxTools        = "mcp.max_tools"
	MCPMaxToolBytes    = "mcp.max_tool_bytes"
	// JobsMax and BackgroundOnTimeout configure background jobs (TOOL-8).
	JobsMax             = "jobs.max_per_session"
	BackgroundOnTimeout = "bash.auto_background"
)

// keys is every setting, in the order `rein config show` lists them.
var keys = []Key{
	{Name: Model, Env: "REIN_MODEL", Flag: "model",
		Doc: "the model: provider/model, a bare model name, a profile name, or replay:PATH"},
	{Name: PermissionMode, Env: "REIN_PERMISSION_MODE", Flag: "permission-mode", Default: "default", Kind: KindMode,
		Doc: "strict, default, accept-edits, read-only, plan or bypass"},
	{Name: AskTimeout, Env: "REIN_ASK_TIMEOUT", Default: "5m", Kind: KindDuration,
		Doc: "how long a permission question waits before the answer is deny"},
	{Name: MaxTurns, Env: "REIN_MAX_TURNS", Flag: "max-turns", Default: "100", Kind: KindInt, Min: 1,
		Doc: "model calls per user message"},
	{Name: Timeout, Env: "REIN_TIMEOUT", Flag: "timeout", Default: "0", Kind: KindDuration,
		Doc: "wall-clock budget of one run (0: none)"},
	{Name: MaxTokens, Env: "REIN_MAX_TOKENS", Default: "0", Kind: KindInt,
		Doc: "output tokens per reply (0: the adapter's default)"},
	{Name: ThinkingBudget, Env: "REIN_THINKING_BUDGET", Default: "0", Kind: KindInt,
		Doc: "reasoning tokens per reply (0: thinking off)"},
	{Name: Sandbox, Env: "REIN_SANDBOX", Flag: "sandbox", Default: "workspace", Kind: KindEnum, Enum: []string{"workspace", "read-only", "off", "on", "auto"},
		Doc: "the sandbox profile of commands (TOOL-7): workspace (the workspace, $TMPDIR and the toolchain caches writable; bubblewrap with Landlock inside, Landlock alone without bubblewrap, a warning when neither), read-only (only $TMPDIR writable; bubblewrap required), on (workspace, bubblewrap required), off (on the host); auto is workspace; a workspace may only tighten it"},
	{Name: SandboxNetwork, Env: "REIN_SANDBOX_NETWORK", Default: "allow-list", Kind: KindEnum, Enum: []string{"allow-list", "off", "on"},
		Doc: "the network of sandboxed commands: allow-list (only sandbox.allow_hosts, through rein's egress proxy; none when the list is empty), off, or on (every host); a workspace's allow-list or on applies once you trust it"},
	{Name: SandboxAllowHosts, Env: "REIN_SANDBOX_ALLOW_HOSTS", Kind: KindList, Sep: ",", Item: checkHost,
		Doc: "hosts sandboxed commands may reach (host, host:port, *.domain, an address; no port means 80 and 443; registries = the package registries; localhost:3000 = the host's own port 3000); a workspace's applies once you trust it"},
	{Name: SandboxCaches, Env: "REIN_SANDBOX_CACHES", Default: "shared", Kind: KindEnum, Enum: []string{"shared", "isolated"},
		Doc: "toolchain caches writable in the sandbox (Go, npm, pnpm, Yarn, pip, uv, cargo, Maven, Gradle, ~/.cache): shared (yours) or isolated (per workspace, under ~/.cache/rein); a workspace's shared applies once you trust it"},
	{Name: SandboxWritable, Env: "REIN_SANDBOX_WRITABLE", Kind: KindList, Sep: string(os.PathListSeparator), Item: checkWritable,
		Doc: "more directories sandboxed commands may write (absolute, or ~/…; protected paths stay protected); a workspace's apply once you trust it"},
	{Name: SystemPrompt, Env: "REIN_SYSTEM_PROMPT", Flag: "system-prompt",
		Doc: "replaces rein's own instructions in the system prompt"},
	{Name: AppendSystemPrompt, Env: "REIN_APPEND_SYSTEM_PROMPT", Flag: "append-system-prompt",
		Doc: "added at the end of the system prompt"},
	{Name: SessionsDir, Env: "REIN_SESSIONS_DIR",
		Doc: "where sessions are kept (default $XDG_DATA_HOME/rein/sessions)"},
	{Name: WorkspaceKind, Env: "REIN_WORKSPACE_KIND", Default: "project", Kind: KindEnum, Enum: []string{"project", "chat"},
		Doc: "the workspace's kind (WS-2): project (tools, execution) or chat (prompt, agent and model only: no tools)"},
	{Name: SubagentMaxDepth, Env: "REIN_SUBAGENT_MAX_DEPTH", Default: "3", Kind: KindInt,
		Doc: "how deep sub-agents nest, counted across processes (0: no task tool); a workspace may only lower it"},
	{Name: SubagentMaxTokens, Env: "REIN_SUBAGENT_MAX_TOKENS", Default: "0", Kind: KindInt,
		Doc: "tokens one sub-agent run may use, its own sub-agents included (0: no bound); a workspace may only tighten it"},
	{Name: SubagentMaxCost, Env: "REIN_SUBAGENT_MAX_COST", Default: "0", Kind: KindFloat,
		Doc: "USD one sub-agent run may spend, its own sub-agents included (0: no bound); a workspace may only tighten it"},
	{Name: Memory, Env: "REIN_MEMORY", Default: "on", Kind: KindEnum, Enum: []string{"on", "off"},
		Doc: "cross-session memory (MEM-1): on puts the user profile and notes in the system prompt and offers the memory tool"},
	{Name: KBEmbeddingModel, Env: "REIN_KB_EMBEDDING_MODEL",
		Doc: "the knowledge base's embedding model (openai/text-embedding-3-small, gemini/gemini-embedding-001, ollama/nomic-embed-text, or a profile's); unset: keyword search only"},
	{Name: MCPMaxTools, Env: "REIN_MCP_MAX_TOOLS", Default: "64", Kind: KindInt, Min: 1,
		Doc: "MCP tool definitions per model request, across all servers (MCP-2); above it (or mcp.max_tool_bytes) the model loads them with mcp_tool_search; a workspace may only lower it"},
	{Name: MCPMaxToolBytes, Env: "REIN_MCP_MAX_TOOL_BYTES", Default: "65536", Kind: KindInt, Min: 1024,
		Doc: "bytes of MCP tool definitions per model request (MCP-2); a workspace may only lower it"},
	{Name: JobsMax, Env: "REIN_JOBS_MAX_PER_SESSION", Default: "16", Kind: KindInt,
		Doc: "background jobs one session may run at once (TOOL-8; 0: none, bash has no run_in_background); a workspace may only lower it"},
	{Name: BackgroundOnTimeout, Env: "REIN_BASH_AUTO_BACKGROUND", Default: "on", Kind: KindEnum, Enum: []string{"on", "off"},
		Doc: "a command still running at its timeout is moved to the background as a job (on) or killed (off) (TOOL-8)"},
}

// Keys returns every setting, in display order.
func Keys() []Key { return slices.Clone(keys) }

// Lookup returns the key called name.
func Lookup(name string) (Key, bool) {
	for _, k := range keys {
		if k.Name == name {
			return k, true
		}
	}
	return Key{}, false
}

// Check validates v as a value of k and returns it normalised (a mode's
// canonical name, trimmed text).
func (k Key) Check(v string) (string, error) {
	v = strings.TrimSpace(v)
	switch k.Kind {
	case KindInt:
		n, err := strconv.Atoi(v)
		if err != nil || n < k.Min {
			return "", fmt.Errorf("%s: want a whole number of at least %d, got %q", k.Name, k.Min, v)
		}
		return strconv.Itoa(n), nil
	case KindDuration:
		if _, err := ParseDuration(v); err != nil {
			return "", fmt.Errorf("%s: %w", k.Name, err)
		}
	case KindFloat:
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || f < 0 || math.IsInf(f, 0) || math.IsNaN(f) {
			return "", fmt.Errorf("%s: want a number of at least 0, such as 0.5, got %q", k.Name, v)
		}
	case KindEnum:
		if !slices.Contains(k.Enum, v) {
			return "", fmt.Errorf("%s: want one of %s, got %q", k.Name, strings.Join(k.Enum, ", "), v)
		}
	case KindList:
		return k.checkList(v)
	case KindMode:
		m, err := permission.ParseMode(v)
		if err != nil {
			return "", fmt.Errorf("%s: %w", k.Name, err)
		}
		return string(m), nil
	}
	return v, nil
}

// ParseDuration reads a duration written as Go writes them ("90s", "1h30m")
// or as a number of seconds ("300", "0.5"). Negative durations are refused.
func ParseDuration(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if secs, err := strconv.ParseFloat(s, 64); err == nil {
		if secs < 0 || secs > 1e9 {
			return 0, fmt.Errorf("want a duration such as 90s or 5m, got %q", s)
		}
		return time.Duration(secs * float64(time.Second)), nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("want a duration such as 90s or 5m, got %q", s)
	}
	return d, nil
}

// Source names a configuration layer.
type Source string

// The layers, highest first.
const (
	SourceFlag      Source = "flag"
	SourceEnv       Source = "env"
	SourceWorkspace Source = "workspace"
	SourceUser      Source = "user"
	SourceDefault   Source = "default"
)

// Layer is what one source sets.
type Layer struct {
	Source Source
	// Origin says where exactly: a file path, a variable, a flag.
	Origin string
	// Values maps key names to values already checked (see [Key.Check]).
	Values map[string]string
	// Origins, when set, overrides Origin per key (the variable or flag
	// that set it).
	Origins map[string]string
}

// Value is a setting's effective value and where it came from.
type Value struct {
	Key    string `json:"key"`
	Value  string `json:"value"`
	Source Source `json:"source"`
	Origin string `json:"origin,omitempty"`
}

// Effective is the resolved configuration.
type Effective struct {
	values map[string]Value
}

// Resolve picks each key's value from the first layer, in the order given
// (highest first), that sets it; keys no layer sets get their built-in
// default.
func Resolve(layers ...Layer) *Effective {
	e := &Effective{values: make(map[string]Value, len(keys))}
	for _, k := range keys {
		v := Value{Key: k.Name, Value: k.Default, Source: SourceDefault}
		for _, l := range layers {
			if s, ok := l.Values[k.Name]; ok {
				v = Value{Key: k.Name, Value: s, Source: l.Source, Origin: l.Origin}
				if o := l.Origins[k.Name]; o != "" {
					v.Origin = o
				}
				break
			}
		}
		e.values[k.Name] = v
	}
	return e
}

// Get returns the value of key name (the zero Value for an unknown key).
func (e *Effective) Get(name string) Value { return e.values[name] }

// String returns the value of key name.
func (e *Effective) String(name string) string { return e.values[name].Value }

// Int returns the value of an integer key; values were checked when their
// layer was read, so a bad one reads as 0.
func (e *Effective) Int(name string) int {
	n, _ := strconv.Atoi(e.values[name].Value)
	return n
}

// Float returns the value of a number key; a bad one reads as 0.
func (e *Effective) Float(name string) float64 {
	f, _ := strconv.ParseFloat(e.values[name].Value, 64)
	return f
}

// Duration returns the value of a duration key.
func (e *Effective) Duration(name string) time.Duration {
	d, _ := ParseDuration(e.values[name].Value)
	return d
}

// Set overrides a value after resolution, recording its source (the CLI
// uses it when a resumed session names the model).
func (e *Effective) Set(name, value string, src Source, origin string) {
	e.values[name] = Value{Key: name, Value: value, Source: src, Origin: origin}
}

// All returns every value in display order.
func (e *Effective) All() []Value {
	out := make([]Value, 0, len(keys))
	for _, k := range keys {
		out = append(out, e.values[k.Name])
	}
	return out
}

// EnvLayer reads the REIN_* variables through getenv. A bad value is an
// error naming the variable.
func EnvLayer(getenv func(string) string) (Layer, error) {
	l := Layer{Source: SourceEnv, Values: map[string]string{}, Origins: map[string]string{}}
	for _, k := range keys {
		raw := getenv(k.Env)
		if raw == "" {
			continue
		}
		v, err := k.Check(raw)
		if err != nil {
			return Layer{}, fmt.Errorf("environment variable %s: %w", k.Env, err)
		}
		l.Values[k.Name], l.Origins[k.Name] = v, k.Env
	}
	return l, nil
}

// FlagLayer checks the values given by flags, keyed by setting name.
func FlagLayer(flags map[string]string) (Layer, error) {
	l := Layer{Source: SourceFlag, Values: map[string]string{}, Origins: map[string]string{}}
	for name, raw := range flags {
		k, ok := Lookup(name)
		if !ok {
			return Layer{}, fmt.Errorf("unknown setting %q", name)
		}
		v, err := k.Check(raw)
		if err != nil {
			return Layer{}, fmt.Errorf("flag --%s: %w", k.Flag, err)
		}
		l.Values[name], l.Origins[name] = v, "--"+k.Flag
	}
	return l, nil
}
