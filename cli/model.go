package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/llm/anthropic"
	"github.com/reinhq/rein/llm/gemini"
	"github.com/reinhq/rein/llm/openai"
	"github.com/reinhq/rein/llm/registry"
	"github.com/reinhq/rein/llm/replay"
	"github.com/reinhq/rein/runner"
)

// replayPrefix selects the replay provider: replay:PATH plays a cassette.
const replayPrefix = "replay:"

// noProviderHelp says how to configure a model; it follows "no model is
// configured".
const noProviderHelp = `Configure one of:
  export ANTHROPIC_API_KEY=…   Anthropic (ANTHROPIC_BASE_URL for a proxy or gateway)
  export OPENAI_API_KEY=…      OpenAI (OPENAI_BASE_URL for a compatible server)
  export GEMINI_API_KEY=…      Google Gemini (GOOGLE_GEMINI_BASE_URL for a proxy)
  rein provider add NAME --provider openai-compatible --base-url URL --default-model MODEL
                               then: rein provider use NAME   (Ollama, vLLM, OpenRouter, …)
or name a model with --model (or REIN_MODEL, or model: in ~/.config/rein/settings.yaml).
Try rein offline with a recorded run:
  rein run --model replay:examples/quickstart.cassette
rein doctor checks the configuration.`

// errNoModel is the error of a run with no model configured.
func errNoModel() error {
	return fail(ExitError, "no model is configured.\n%s", noProviderHelp)
}

// resolveModel turns a model string into a provider.
func (a *App) resolveModel(reg *registry.Registry, spec string) (*runner.Model, error) {
	spec = strings.TrimSpace(spec)
	switch {
	case spec == "":
		return nil, errNoModel()
	case strings.HasPrefix(spec, replayPrefix):
		return a.openReplay(reg, strings.TrimPrefix(spec, replayPrefix))
	}
	if a.Models != nil {
		m, ok, err := a.Models(spec)
		if err != nil {
			return nil, failErr(err)
		}
		if ok {
			return &runner.Model{Provider: m.Provider, ProviderName: m.ProviderName, Name: m.Name, Caps: m.Caps,
				Label: m.ProviderName + "/" + m.Name}, nil
		}
	}
	r, err := reg.Resolve(spec)
	if err != nil {
		return nil, fail(ExitError, "%v", err)
	}
	if r.Warning, err = checkModelName(reg, r); err != nil {
		return nil, fail(ExitError, "%v", err)
	}
	if err := r.Profile.CheckAuth(); err != nil {
		return nil, fail(ExitError, "%v\nSet the key, or choose another model with --model (rein provider list shows the profiles).", err)
	}
	var token func(context.Context) (string, error)
	if r.Profile.OAuth != nil {
		ts, err := r.Profile.TokenSource(a.getenv, nil)
		if err != nil {
			return nil, fail(ExitError, "%v\nrein provider list shows the profile's oauth settings.", err)
		}
		token = ts.Token
	}
	p, name := newAdapter(r.Profile, token, r.Betas...)
	p = naming(p, endpointOf(reg, r.Profile))
	m := &runner.Model{Provider: p, ProviderName: name, Name: r.Model, Caps: r.Caps,
		Label: r.Profile.Name + "/" + r.Model, Warning: r.Warning}
	if r.PlanModel != "" {
		// opusplan: the opus half runs plan mode (PERM-7); the session
		// keeps the alias, so resuming it keeps both halves.
		if m.Plan, err = a.resolveModel(reg, r.PlanModel); err != nil {
			return nil, err
		}
		m.Label = spec
	}
	return m, nil
}

// newAdapter builds the adapter a profile names, and returns it with the
// provider name it stamps on replies. The OpenAI kinds are "openai" (the
// adapter sends OpenAI-only fields under that name); an OpenAI-compatible
// endpoint goes by its profile's name. token, when set, is the OAuth
// profile's bearer token source (PROV-4). betas are anthropic-beta flags
// the model needs (registry.Resolved.Betas: the 1M-token window of a
// `[1m]` model string); only the Anthropic adapter sends them.
func newAdapter(p registry.Profile, token func(context.Context) (string, error), betas ...string) (llm.Provider, string) {
	switch p.Provider {
	case registry.KindAnthropic:
		var headers map[string]string
		if len(betas) > 0 {
			headers = map[string]string{"anthropic-beta": strings.Join(betas, ",")}
		}
		return anthropic.New(anthropic.Config{APIKey: p.APIKey, Token: token, BaseURL: p.BaseURL, Name: "anthropic", Headers: headers}), "anthropic"
	case registry.KindOpenAI:
		return openai.NewChat(openai.Config{APIKey: p.APIKey, Token: token, BaseURL: p.BaseURL, Name: "openai"}), "openai"
	case registry.KindOpenAIResponses:
		return openai.NewResponses(openai.Config{APIKey: p.APIKey, Token: token, BaseURL: p.BaseURL, Name: "openai"}), "openai"
	case registry.KindGoogle:
		return gemini.New(gemini.Config{APIKey: p.APIKey, Token: token, BaseURL: p.BaseURL, Name: "google"}), "google"
	}
	if token != nil {
		return openai.NewChat(openai.Config{Token: token, BaseURL: p.BaseURL, Name: p.Name}), p.Name
	}
	key := p.APIKey
	if key == "" && p.APIKeyEnv == "" {
		// A keyless local server (Ollama, vLLM, llama.cpp): the adapter
		// refuses to send without a key, and such servers ignore it.
		key = keylessPlaceholder
	}
	return openai.NewChat(openai.Config{APIKey: key, BaseURL: p.BaseURL, Name: p.Name, KeyEnv: firstEnv(p.APIKeyEnv)}), p.Name
}

// firstEnv returns the first of a comma-separated list of variable names.
func firstEnv(list string) string {
	name, _, _ := strings.Cut(list, ",")
	return strings.TrimSpace(name)
}

// keylessPlaceholder is the API key sent to OpenAI-compatible profiles that
// declare no key at all.
const keylessPlaceholder = "no-key"

// openReplay opens a cassette as the model. The run's frame (model, system
// prompt, output limit) is pinned to the recording's first request, so a
// cassette recorded in one directory or on one machine replays in another;
// the tools run for real and their results must match the recording.
func (a *App) openReplay(reg *registry.Registry, path string) (*runner.Model, error) {
	if path == "" {
		return nil, usageErrorf("--model replay:PATH needs the cassette's path")
	}
	f, err := os.Open(a.abs(path))
	if err != nil {
		return nil, fail(ExitError, "replay: %v\nRecord a cassette with rein run --record FILE, or check the path.", err)
	}
	defer f.Close()
	c, err := replay.Parse(f)
	if err != nil {
		return nil, fail(ExitError, "replay: %s: %v", path, err)
	}
	if len(c.Interactions) == 0 {
		return nil, fail(ExitError, "replay: %s holds no recorded model calls", path)
	}
	fr, err := frameOf(c.Interactions[0].Request)
	if err != nil {
		return nil, fail(ExitError, "replay: %s: %v", path, err)
	}
	prov := c.Header.Provider
	if prov == "" {
		prov = "replay"
	}
	caps, ok := reg.Lookup(prov, fr.Model)
	if !ok {
		caps = registry.Model{Name: fr.Model, Provider: prov, ContextWindow: registry.DefaultContextWindow, MaxOutput: registry.DefaultMaxOutput}
	}
	p := replay.FromCassette(c, replay.Options{})
	// The label is the model string again, the cassette's path made
	// absolute: a session records it, so resuming it (from anywhere)
	// replays the same cassette rather than asking a provider of the
	// recording's name for a key (SPEC SESS-3).
	return &runner.Model{Provider: p, ProviderName: prov, Name: fr.Model, Caps: caps,
		Label: replayPrefix + a.abs(path), Frame: fr}, nil
}

// replayIsolated reports a model string that replays a cassette recorded
// without the user's configuration (no user_config in its header): such a
// run loads none either ([workspace.Options.WithoutUser]), so the
// recording's tools and agents are what it offers, whatever this user has
// configured (SPEC CLI-1). A cassette that cannot be read is left for
// [App.openReplay] to report.
func (a *App) replayIsolated(spec string) bool {
	path, ok := strings.CutPrefix(strings.TrimSpace(spec), replayPrefix)
	if !ok || path == "" {
		return false
	}
	f, err := os.Open(a.abs(path))
	if err != nil {
		return false
	}
	defer f.Close()
	h, err := replay.ReadHeader(f)
	return err == nil && !h.UserConfig
}

// frameOf reads the frame of a recorded request (its canonical JSON).
func frameOf(req json.RawMessage) (*runner.Frame, error) {
	var raw struct {
		runner.Frame
		Thinking *struct {
			BudgetTokens int    `json:"budget_tokens"`
			Effort       string `json:"effort"`
		} `json:"thinking"`
		Messages []struct {
			Role    string `json:"role"`
			Content []struct {
				Type string `json:"type"`
				Text string `json:"text"`
			} `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(req, &raw); err != nil {
		return nil, fmt.Errorf("first recorded request: %w", err)
	}
	if raw.Model == "" {
		return nil, errors.New("first recorded request names no model")
	}
	fr := raw.Frame
	if t := raw.Thinking; t != nil {
		fr.Thinking = &llm.ThinkingConfig{BudgetTokens: t.BudgetTokens, Effort: t.Effort}
	}
	if len(raw.Messages) > 0 && raw.Messages[0].Role == string(llm.RoleUser) {
		var parts []string
		for _, b := range raw.Messages[0].Content {
			if b.Type == "text" {
				parts = append(parts, b.Text)
			}
		}
		fr.Prompt = strings.Join(parts, "")
	}
	return &fr, nil
}
