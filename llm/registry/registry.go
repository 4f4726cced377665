// Package registry turns a model string into everything needed to call the
// model: the profile that reaches it, its capabilities and its price
// (SPEC PROV-3, PROV-4).
//
// A model string is "provider/model" — split at the first '/', so
// "openrouter/anthropic/claude-sonnet-4.5" is the model
// "anthropic/claude-sonnet-4.5" on the openrouter profile — or a bare name
// attributed by its prefix: claude- is anthropic; gpt-, o1, o3, o4 and
// chatgpt- are openai; gemini- is google. A [Profile] names an adapter kind,
// a base URL, where the key comes from and a default model; built-in profiles
// cover the three vendors and the common OpenAI-compatible servers (ollama,
// openrouter, deepseek, vllm, llamacpp), and configuration adds or overrides
// them. A [Model] holds the context window, output limit, capabilities and
// [Price]; dated ids ("claude-sonnet-4-5-20250929") resolve to their family,
// and an unknown model under a known provider runs on conservative defaults
// with a warning.
//
// Credentials are read through a getenv function the caller passes, never
// from the process environment directly; [TokenSource] refreshes OAuth
// tokens. The package imports only llm: the CLI builds adapters from a
// [Resolved].
package registry

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/reinhq/rein/internal/suggest"
)

// Config configures a [Registry]. The zero value gives the built-in profiles
// and models and reads no environment.
type Config struct {
	// Profiles add to the built-in profiles; one with a built-in's name
	// overrides the fields it sets.
	Profiles []Profile
	// Models add to the built-in table; one with a built-in's provider and
	// name replaces it.
	Models []Model
	// Getenv reads the environment for keys and base URLs (os.Getenv in the
	// CLI); nil reads nothing.
	Getenv func(string) string
	// Aliases are the user's model aliases (config.yaml `aliases:`): a name
	// to a model string. They replace the built-in entries of the same name
	// (sonnet, opus, haiku). See alias.go.
	Aliases map[string]string
	// WorkspaceAliases are a workspace's (.rein/models.yaml `aliases:`):
	// they may only add names; one that redefines an alias is ignored with
	// a warning ([Registry.Warnings]).
	WorkspaceAliases map[string]string
}

// Registry resolves model strings against profiles and a model table. It is
// immutable once built and safe for concurrent use.
type Registry struct {
	profiles map[string]Profile
	models   map[string]map[string]Model // vendor → name → model
	getenv   func(string) string
	aliases  map[string]string // alias → model string
	warnings []string
}

// New builds a registry from the built-ins and cfg. It fails on a profile
// without a name or with an unknown provider kind, and on a model without a
// name or provider.
func New(cfg Config) (*Registry, error) {
	r := &Registry{
		profiles: make(map[string]Profile),
		models:   make(map[string]map[string]Model),
		getenv:   cfg.Getenv,
	}
	for _, p := range builtinProfiles() {
		r.profiles[p.Name] = p
	}
	for _, p := range cfg.Profiles {
		if base, ok := r.profiles[p.Name]; ok && p.Name != "" {
			p = base.merge(p)
		}
		if err := p.validate(); err != nil {
			return nil, fmt.Errorf("registry: %w", err)
		}
		r.profiles[p.Name] = p
	}
	for _, m := range builtinModels() {
		r.addModel(m)
	}
	for _, m := range cfg.Models {
		if m.Name == "" || m.Provider == "" {
			return nil, fmt.Errorf("registry: model %q: name and provider are required", m.Name)
		}
		r.addModel(m)
	}
	var err error
	if r.aliases, r.warnings, err = buildAliases(cfg); err != nil {
		return nil, fmt.Errorf("registry: %w", err)
	}
	return r, nil
}

// builtin returns a registry of the built-ins alone.
func builtin() *Registry {
	r, err := New(Config{})
	if err != nil {
		panic(err) // the built-in tables are wrong: a bug
	}
	return r
}

func (r *Registry) addModel(m Model) {
	t := r.models[m.Provider]
	if t == nil {
		t = make(map[string]Model)
		r.models[m.Provider] = t
	}
	t[m.Name] = m
}

// Profile returns the profile called name.
func (r *Registry) Profile(name string) (Profile, bool) {
	p, ok := r.profiles[name]
	return p, ok
}

// Profiles returns every profile, sorted by name.
func (r *Registry) Profiles() []Profile {
	out := make([]Profile, 0, len(r.profiles))
	for _, p := range r.profiles {
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Models returns every known model, sorted by provider then name.
func (r *Registry) Models() []Model {
	var out []Model
	for _, t := range r.models {
		for _, m := range t {
			out = append(out, m)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Provider != out[j].Provider {
			return out[i].Provider < out[j].Provider
		}
		return out[i].Name < out[j].Name
	})
	return out
}

// Parse splits a model string into a profile name and the model's name as
// the provider knows it, using the built-in profiles. See [Registry.Parse].
func Parse(model string) (provider, name string, err error) {
	return builtin().Parse(model)
}

// Parse splits a model string into a profile name and a model name.
//
// "provider/model" is split at the first '/' when the prefix names a profile
// (built-in or configured); "gemini/…" is accepted for google. A bare name is
// attributed by prefix (claude- → anthropic; gpt-, o1, o3, o4, chatgpt- →
// openai; gemini- → google), and a bare profile name means that profile's
// default model. An alias (sonnet, opus, haiku, opusplan, the user's) is
// replaced by its model string first, and a `[1m]` suffix is dropped (see
// [Registry.Resolve] for what it does). Anything else is a *ParseError
// suggesting the three closest known model names.
func (r *Registry) Parse(model string) (provider, name string, err error) {
	e, err := r.expand(model)
	if err != nil {
		return "", "", err
	}
	provider, name, err = r.parse(e.spec)
	if pe, ok := err.(*ParseError); ok && e.spec != strings.TrimSpace(model) {
		pe.Reason = fmt.Sprintf("%s (the alias or suffix of %q stands for %q)", pe.Reason, strings.TrimSpace(model), e.spec)
		pe.Input = model
	}
	return provider, name, err
}

// parse is Parse of a model string without aliases.
func (r *Registry) parse(model string) (provider, name string, err error) {
	s := strings.TrimSpace(model)
	if s == "" {
		return "", "", &ParseError{Input: model, Reason: "empty model name"}
	}
	if strings.ContainsFunc(s, func(c rune) bool { return c <= ' ' || c == 0x7f }) {
		return "", "", &ParseError{Input: model, Reason: "a model name may not hold spaces or control characters"}
	}
	if prefix, rest, ok := strings.Cut(s, "/"); ok {
		if prefix == "gemini" {
			prefix = "google"
		}
		if _, known := r.profiles[prefix]; !known {
			names := r.profileNames()
			return "", "", &ParseError{Input: model,
				Reason:      fmt.Sprintf("unknown provider %q (known: %s)", prefix, strings.Join(names, ", ")),
				Suggestions: closest(prefix, names, 1)}
		}
		if rest == "" || strings.HasPrefix(rest, "/") {
			return "", "", &ParseError{Input: model, Reason: fmt.Sprintf("no model name after %q", prefix+"/")}
		}
		return prefix, rest, nil
	}
	if p := attribute(s); p != "" {
		return p, s, nil
	}
	if s == "gemini" {
		s = "google"
	}
	if p, ok := r.profiles[s]; ok {
		if p.DefaultModel == "" {
			return "", "", &ParseError{Input: model,
				Reason: fmt.Sprintf("profile %q has no default model; write %s/<model>", s, s)}
		}
		return p.Name, p.DefaultModel, nil
	}
	return "", "", &ParseError{Input: model, Reason: "unknown model: cannot tell its provider from the name",
		Suggestions: closest(s, r.modelNames(), 3), Unattributed: true}
}

// attribute returns the vendor a bare model name belongs to by its prefix,
// or "" when the name does not say.
func attribute(name string) string {
	n := strings.ToLower(name)
	switch {
	case strings.HasPrefix(n, "claude-"):
		return "anthropic"
	case strings.HasPrefix(n, "gpt-"), strings.HasPrefix(n, "chatgpt-"),
		family(n, "o1"), family(n, "o3"), family(n, "o4"):
		return "openai"
	case strings.HasPrefix(n, "gemini-"):
		return "google"
	}
	return ""
}

// family reports whether n is f or f followed by a '-' suffix ("o3",
// "o3-mini", but not "o3x").
func family(n, f string) bool {
	return n == f || strings.HasPrefix(n, f+"-")
}

func (r *Registry) profileNames() []string {
	names := make([]string, 0, len(r.profiles))
	for n := range r.profiles {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// ParseError is a model string rein cannot resolve.
type ParseError struct {
	Input  string // the model string as given
	Reason string // what is wrong with it
	// Suggestions are the closest known model names, best first.
	Suggestions []string
	// Unattributed marks a bare name whose provider the name does not tell.
	Unattributed bool
}

// Error says what is wrong, what was perhaps meant and how to write it.
func (e *ParseError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "model %q: %s", e.Input, e.Reason)
	if len(e.Suggestions) > 0 {
		fmt.Fprintf(&b, "; did you mean %s?", strings.Join(e.Suggestions, ", "))
	}
	if e.Unattributed {
		fmt.Fprintf(&b, " Write provider/model (for example ollama/%s or openrouter/%s)",
			strings.TrimSpace(e.Input), strings.TrimSpace(e.Input))
	}
	return b.String()
}

// modelNames returns the known model names, each once, sorted.
func (r *Registry) modelNames() []string {
	var names []string
	for _, m := range r.Models() {
		names = append(names, m.Name)
	}
	slices.Sort(names)
	return slices.Compact(names)
}

// closest returns the n names nearest to s, ties in name order.
func closest(s string, names []string, n int) []string {
	sorted := slices.Clone(names)
	slices.Sort(sorted)
	return suggest.Closest(s, sorted, n)
}

// Lookup returns the built-in entry for a model; see [Registry.Lookup].
func Lookup(provider, model string) (Model, bool) {
	return builtin().Lookup(provider, model)
}

// Lookup returns what rein knows about model on provider (a profile name or
// a vendor). An exact entry wins; otherwise a dated or versioned id
// ("claude-sonnet-4-5-20250929", "gpt-4o-2024-08-06", "gemini-2.5-flash-001",
// "…-latest") resolves to the longest known family name it extends. On an
// OpenAI-compatible profile, a "vendor/model" name such as OpenRouter's
// "anthropic/claude-sonnet-4.5" falls back to that vendor's entry.
func (r *Registry) Lookup(provider, model string) (Model, bool) {
	vendor := provider
	if p, ok := r.profiles[provider]; ok {
		vendor = p.vendor()
	}
	if m, ok := r.lookupIn(vendor, model); ok {
		return m, true
	}
	if p, ok := r.profiles[provider]; ok && p.Provider == KindOpenAICompatible {
		if v, rest, ok := strings.Cut(model, "/"); ok {
			if v == "gemini" {
				v = "google"
			}
			if slices.Contains([]string{"anthropic", "openai", "google"}, v) {
				if m, ok := r.lookupIn(v, rest); ok {
					return m, true
				}
				// OpenRouter writes versions with dots: claude-sonnet-4.5.
				if m, ok := r.lookupIn(v, strings.ReplaceAll(rest, ".", "-")); ok {
					return m, true
				}
			}
		}
	}
	return Model{}, false
}

func (r *Registry) lookupIn(vendor, model string) (Model, bool) {
	t := r.models[vendor]
	if m, ok := t[model]; ok {
		return m, true
	}
	var best Model
	found := false
	for name, m := range t {
		if len(name) > len(best.Name) && strings.HasPrefix(model, name) && versionSuffix(model[len(name):]) {
			best, found = m, true
		}
	}
	return best, found
}

// versionSuffix reports whether s is what a vendor appends to a family name
// for a snapshot: "-latest", or '-' or '@' then at least three digits
// ("-20250929", "-2024-08-06", "@20250514", "-001"). A single digit is a new
// family ("claude-sonnet-4-6"), not a snapshot of claude-sonnet-4.
func versionSuffix(s string) bool {
	if s == "-latest" {
		return true
	}
	if len(s) < 4 || (s[0] != '-' && s[0] != '@') {
		return false
	}
	digits := 0
	for _, c := range []byte(s[1:]) {
		if c < '0' || c > '9' {
			break
		}
		digits++
	}
	return digits >= 3
}

// Resolved is a model string resolved: the profile to call (credentials and
// base URL filled from the environment), the model's name as the provider
// knows it, and its capabilities.
type Resolved struct {
	// Profile is the profile to call, with APIKey and BaseURL resolved.
	Profile Profile
	// Model is the name to send in requests ("claude-sonnet-4-5-20250929").
	Model string
	// Caps is the model's entry, or conservative defaults when unknown.
	Caps Model
	// Warning is one line for the caller to log when Caps are defaults; empty
	// otherwise.
	Warning string
	// LongContext: the model string asked for the 1M-token variant (the
	// `[1m]` suffix); Caps.ContextWindow is LongContextWindow.
	LongContext bool
	// Betas are anthropic-beta flags the adapter must send for this model
	// ([BetaContext1M] for `[1m]` on a model whose own window is smaller).
	Betas []string
	// PlanModel, for opusplan, is the model string plan mode runs (opus's
	// target); empty otherwise. Outside plan mode runs use Model, the
	// sonnet half.
	PlanModel string
}

// Resolve parses a model string and resolves it. An unknown model on a known
// provider is not an error: Caps holds conservative defaults (128k context,
// 8k output, no images, no price) and Warning says so.
//
// Aliases resolve first (`sonnet` → claude-sonnet-5; see alias.go). The
// `[1m]` suffix asks for the 1M-token context variant: Caps.ContextWindow
// becomes LongContextWindow and, on an Anthropic profile whose model has a
// smaller window of its own, Betas holds [BetaContext1M] for the adapter to
// send. On another kind of profile the suffix is an error: only Anthropic
// serves that variant.
func (r *Registry) Resolve(model string) (Resolved, error) {
	e, err := r.expand(model)
	if err != nil {
		return Resolved{}, err
	}
	provider, name, err := r.Parse(model)
	if err != nil {
		return Resolved{}, err
	}
	p := r.profiles[provider]
	res := Resolved{Profile: Auth(p, r.getenv), Model: name, PlanModel: e.plan}
	if caps, ok := r.Lookup(provider, name); ok {
		res.Caps = caps
	} else {
		res.Caps = unknownModel(p.vendor(), name)
		res.Warning = fmt.Sprintf("unknown model %s for provider %s: using conservative defaults (128k context); add it to .rein/models.yaml",
			name, provider)
	}
	if e.long {
		if p.Provider != KindAnthropic {
			return Resolved{}, &ParseError{Input: model, Reason: fmt.Sprintf("the [1m] suffix asks for Anthropic's 1M-token context variant, and profile %s is not an Anthropic one; drop the suffix", provider)}
		}
		res.LongContext = true
		if res.Caps.ContextWindow < LongContextWindow {
			res.Caps.ContextWindow = LongContextWindow
			res.Betas = []string{BetaContext1M}
		}
	}
	return res, nil
}
