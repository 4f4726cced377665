package registry

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
	"sync"
)

// Model aliases (SPEC COMPAT-1, PROV-3): Claude Code's short names for
// models — `sonnet`, `opus`, `haiku`, `opusplan`, and the `[1m]` suffix —
// resolved through a table the user may override.
//
// An alias stands for a model string, never for an endpoint or a key: its
// target is parsed like any model string ([Registry.Parse]), so it reaches
// only a profile the configuration already has, with that profile's base
// URL and credentials. A value that looks like a URL, or holds spaces or
// control characters, is refused when the registry is built.
//
// Precedence, highest first: Claude Code's variables
// (ANTHROPIC_DEFAULT_SONNET_MODEL, ANTHROPIC_DEFAULT_OPUS_MODEL,
// ANTHROPIC_DEFAULT_HAIKU_MODEL, read through Config.Getenv), the user's
// aliases (config.yaml `aliases:`), the built-in table. A workspace's
// aliases (.rein/models.yaml `aliases:`) may only add names: one that
// redefines a built-in or user alias is ignored with a warning, since a
// cloned repository must not move the user's `--model sonnet` elsewhere.

// Aliases that are not entries of the table.
const (
	// AliasInherit, as an agent's model, is its parent's model. Resolving
	// it outside an agent is an error that says so.
	AliasInherit = "inherit"
	// AliasOpusPlan is `opus` in plan mode and `sonnet` otherwise (Claude
	// Code's opusplan): it resolves to the sonnet model and
	// [Resolved.PlanModel] names the opus one, which the runner calls while
	// the permission mode is plan (runner.Model.Plan).
	AliasOpusPlan = "opusplan"
)

// LongContextSuffix marks the 1M-token context variant of a model or alias
// (`sonnet[1m]`, `claude-sonnet-4-5[1m]`).
const LongContextSuffix = "[1m]"

// LongContextWindow is the context window of the `[1m]` variant.
const LongContextWindow = 1_000_000

// BetaContext1M is the anthropic-beta flag that opens the 1M-token window
// on the Anthropic models whose own window is smaller (Sonnet 4 and 4.5);
// models whose window is 1M already need none.
const BetaContext1M = "context-1m-2025-08-07"

// builtinAliases returns the default alias table: Claude Code's aliases on
// the Anthropic API as of Claude Code v2.1.240 (opus → Claude Opus 5,
// sonnet → Claude Sonnet 5, haiku → Claude Haiku 4.5).
func builtinAliases() map[string]string {
	return map[string]string{
		"sonnet": "claude-sonnet-5",
		"opus":   "claude-opus-5",
		"haiku":  "claude-haiku-4-5",
	}
}

// aliasEnv are Claude Code's variables that override an alias.
var aliasEnv = map[string]string{
	"sonnet": "ANTHROPIC_DEFAULT_SONNET_MODEL",
	"opus":   "ANTHROPIC_DEFAULT_OPUS_MODEL",
	"haiku":  "ANTHROPIC_DEFAULT_HAIKU_MODEL",
}

// aliasNameRE is a valid alias name.
var aliasNameRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z][a-z0-9._-]{0,63}$`) })

// checkAlias validates one alias entry; where names the file or layer.
func checkAlias(where, name, target string) error {
	if !aliasNameRE().MatchString(name) {
		return fmt.Errorf("%s: alias %q: a name is 1 to 64 lower-case letters, digits, '.', '_' and '-', starting with a letter", where, name)
	}
	if name == AliasInherit || name == AliasOpusPlan {
		return fmt.Errorf("%s: alias %q is rein's own and cannot be redefined; redefine sonnet or opus instead", where, name)
	}
	return checkAliasTarget(where, name, target)
}

// checkAliasTarget refuses a target that is not a model string.
func checkAliasTarget(where, name, target string) error {
	t := strings.TrimSpace(target)
	switch {
	case t == "":
		return fmt.Errorf("%s: alias %q has no model: write a model id such as claude-sonnet-4-5", where, name)
	case strings.Contains(t, "://") || strings.HasPrefix(t, "//"):
		return fmt.Errorf("%s: alias %q: %q is a URL; an alias names a model id (optionally provider/model), never an endpoint — set a base URL on a profile instead", where, name, clip(t, 60))
	case strings.ContainsFunc(t, func(c rune) bool { return c <= ' ' || c == 0x7f }):
		return fmt.Errorf("%s: alias %q: a model id may not hold spaces or control characters", where, name)
	case strings.HasSuffix(strings.ToLower(t), LongContextSuffix):
		return fmt.Errorf("%s: alias %q: write the [1m] suffix where the alias is used (%s[1m]), not in its target", where, name, name)
	}
	return nil
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// buildAliases merges the alias layers of cfg; warnings say what a
// workspace's entries were refused.
func buildAliases(cfg Config) (map[string]string, []string, error) {
	out := builtinAliases()
	for _, name := range sortedKeys(cfg.Aliases) {
		if err := checkAlias("aliases", name, cfg.Aliases[name]); err != nil {
			return nil, nil, err
		}
		out[name] = strings.TrimSpace(cfg.Aliases[name])
	}
	var warnings []string
	for _, name := range sortedKeys(cfg.WorkspaceAliases) {
		target := cfg.WorkspaceAliases[name]
		if err := checkAlias("workspace aliases", name, target); err != nil {
			warnings = append(warnings, err.Error()+"; ignored")
			continue
		}
		if prev, ok := out[name]; ok {
			warnings = append(warnings, fmt.Sprintf("workspace alias %s → %s redefines %s → %s; ignored: a workspace may only add aliases (redefine it in your own config.yaml)",
				name, clip(strings.TrimSpace(target), 60), name, prev))
			continue
		}
		out[name] = strings.TrimSpace(target)
	}
	return out, warnings, nil
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Aliases returns the alias table in force (Claude Code's variables
// applied), sorted by name.
func (r *Registry) Aliases() map[string]string {
	out := make(map[string]string, len(r.aliases))
	for name := range r.aliases {
		out[name], _ = r.alias(name)
	}
	return out
}

// Warnings are what the registry ignored of its configuration: a
// workspace's aliases that redefine one, or are not valid.
func (r *Registry) Warnings() []string { return append([]string(nil), r.warnings...) }

// alias returns the model string an alias stands for: Claude Code's
// variable, else the table's entry.
func (r *Registry) alias(name string) (string, bool) {
	if env, ok := aliasEnv[name]; ok && r.getenv != nil {
		if v := strings.TrimSpace(r.getenv(env)); v != "" && checkAliasTarget(env, name, v) == nil {
			return v, true
		}
	}
	t, ok := r.aliases[name]
	return t, ok
}

// expanded is a model string with its alias and suffix resolved.
type expanded struct {
	spec string // the model string to parse
	long bool   // the [1m] suffix was given
	plan string // opusplan: the model string of plan mode
}

// expand resolves aliases in a model string: `sonnet` → its target,
// `opusplan` → sonnet's (plan: opus's), and strips the `[1m]` suffix. A
// name that is no alias is returned as written. Aliases do not chain: a
// target is a model string, not another alias.
func (r *Registry) expand(model string) (expanded, error) {
	s := strings.TrimSpace(model)
	var e expanded
	if len(s) >= len(LongContextSuffix) && strings.EqualFold(s[len(s)-len(LongContextSuffix):], LongContextSuffix) {
		s, e.long = strings.TrimSpace(s[:len(s)-len(LongContextSuffix)]), true
		if s == "" {
			return e, &ParseError{Input: model, Reason: "no model before [1m]: write sonnet[1m] or a model id followed by [1m]"}
		}
	}
	switch name := strings.ToLower(s); {
	case name == AliasInherit:
		return e, &ParseError{Input: model, Reason: "inherit means the parent's model and is valid only as an agent's model; name a model or an alias (sonnet, opus, haiku)"}
	case name == AliasOpusPlan:
		sonnet, _ := r.alias("sonnet")
		opus, _ := r.alias("opus")
		e.spec, e.plan = sonnet, opus
	default:
		if t, ok := r.alias(name); ok && !strings.Contains(s, "/") {
			e.spec = t
		} else {
			e.spec = s
		}
	}
	return e, nil
}
