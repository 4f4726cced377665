package registry

import (
	"fmt"
	"strings"

	"github.com/reinhq/rein/llm"
)

// The adapter kinds a profile can name in [Profile.Provider].
const (
	KindAnthropic        = "anthropic"         // Anthropic Messages API
	KindOpenAI           = "openai"            // OpenAI Chat Completions
	KindOpenAIResponses  = "openai-responses"  // OpenAI Responses API
	KindGoogle           = "google"            // Google Gemini API
	KindOpenAICompatible = "openai-compatible" // any Chat Completions server
)

// Profile is a named way to reach models: which adapter, where, with what
// credentials, and which model to use when none is named. Profiles come built
// in (anthropic, openai, google, and OpenAI-compatible presets) and from user
// configuration; a configured profile with a built-in's name overrides the
// fields it sets and keeps the rest.
type Profile struct {
	// Name is what model strings start with ("openrouter" in
	// "openrouter/anthropic/claude-sonnet-4.5").
	Name string `json:"name" yaml:"name"`
	// Provider is the adapter kind: anthropic, openai, openai-responses,
	// google or openai-compatible.
	Provider string `json:"provider" yaml:"provider"`
	// BaseURL is the API root; empty means the adapter's default.
	BaseURL string `json:"base_url,omitempty" yaml:"base_url,omitempty"`
	// BaseURLEnv names a variable that supplies BaseURL when BaseURL is empty
	// (ANTHROPIC_BASE_URL).
	BaseURLEnv string `json:"base_url_env,omitempty" yaml:"base_url_env,omitempty"`
	// APIKeyEnv names the variable holding the key; several may be listed,
	// separated by commas, and the first one set wins
	// ("GEMINI_API_KEY,GOOGLE_API_KEY"). Empty means the endpoint needs no key.
	APIKeyEnv string `json:"api_key_env,omitempty" yaml:"api_key_env,omitempty"`
	// APIKey is a key given in configuration; it wins over APIKeyEnv.
	APIKey string `json:"api_key,omitempty" yaml:"api_key,omitempty"`
	// DefaultModel is used when a model string names only the profile.
	DefaultModel string `json:"default_model,omitempty" yaml:"default_model,omitempty"`
	// OAuth, when set, authenticates with OAuth2 bearer tokens refreshed
	// from a refresh token (SPEC PROV-4) instead of an API key.
	OAuth *OAuthProfile `json:"oauth,omitempty" yaml:"oauth,omitempty"`
}

// builtinProfiles returns the profiles rein knows without configuration.
// Each call returns a fresh slice.
func builtinProfiles() []Profile {
	return []Profile{
		{Name: "anthropic", Provider: KindAnthropic, BaseURLEnv: "ANTHROPIC_BASE_URL",
			APIKeyEnv: "ANTHROPIC_API_KEY", DefaultModel: "claude-sonnet-4-5"},
		{Name: "openai", Provider: KindOpenAIResponses, BaseURLEnv: "OPENAI_BASE_URL",
			APIKeyEnv: "OPENAI_API_KEY", DefaultModel: "gpt-5"},
		{Name: "google", Provider: KindGoogle, BaseURLEnv: "GOOGLE_GEMINI_BASE_URL",
			APIKeyEnv: "GEMINI_API_KEY,GOOGLE_API_KEY", DefaultModel: "gemini-2.5-pro"},
		{Name: "ollama", Provider: KindOpenAICompatible, BaseURL: "http://127.0.0.1:11434/v1"},
		{Name: "openrouter", Provider: KindOpenAICompatible, BaseURL: "https://openrouter.ai/api/v1",
			APIKeyEnv: "OPENROUTER_API_KEY"},
		{Name: "deepseek", Provider: KindOpenAICompatible, BaseURL: "https://api.deepseek.com/v1",
			APIKeyEnv: "DEEPSEEK_API_KEY", DefaultModel: "deepseek-chat"},
		{Name: "vllm", Provider: KindOpenAICompatible, BaseURL: "http://127.0.0.1:8000/v1"},
		{Name: "llamacpp", Provider: KindOpenAICompatible, BaseURL: "http://127.0.0.1:8080/v1"},
	}
}

// validKind reports whether k is an adapter kind rein has.
func validKind(k string) bool {
	switch k {
	case KindAnthropic, KindOpenAI, KindOpenAIResponses, KindGoogle, KindOpenAICompatible:
		return true
	}
	return false
}

// validate checks a configured profile.
func (p Profile) validate() error {
	if p.Name == "" {
		return fmt.Errorf("profile without a name")
	}
	if strings.ContainsAny(p.Name, "/ \t\r\n") {
		return fmt.Errorf("profile %q: a name may not hold '/' or spaces", p.Name)
	}
	if !validKind(p.Provider) {
		return fmt.Errorf("profile %q: unknown provider %q (want %s, %s, %s, %s or %s)", p.Name, p.Provider,
			KindAnthropic, KindOpenAI, KindOpenAIResponses, KindGoogle, KindOpenAICompatible)
	}
	if p.Provider == KindOpenAICompatible && p.BaseURL == "" && p.BaseURLEnv == "" {
		return fmt.Errorf("profile %q: an openai-compatible profile needs a base_url", p.Name)
	}
	if p.OAuth != nil {
		if p.APIKey != "" || p.APIKeyEnv != "" {
			return fmt.Errorf("profile %q: %w", p.Name, errOAuthAndKey)
		}
		return p.OAuth.validate(p.Name)
	}
	return nil
}

// merge returns p with the fields o sets replacing p's.
func (p Profile) merge(o Profile) Profile {
	set := func(dst *string, v string) {
		if v != "" {
			*dst = v
		}
	}
	set(&p.Provider, o.Provider)
	set(&p.BaseURL, o.BaseURL)
	set(&p.BaseURLEnv, o.BaseURLEnv)
	set(&p.APIKeyEnv, o.APIKeyEnv)
	set(&p.APIKey, o.APIKey)
	set(&p.DefaultModel, o.DefaultModel)
	if o.OAuth != nil {
		p.OAuth = o.OAuth
		// OAuth replaces the key of the profile it overrides.
		if o.APIKeyEnv == "" && o.APIKey == "" {
			p.APIKeyEnv, p.APIKey = "", ""
		}
	}
	return p
}

// vendor returns the table whose models this profile serves: the vendor for
// first-party kinds, the profile's own name for an OpenAI-compatible
// endpoint.
func (p Profile) vendor() string {
	switch p.Provider {
	case KindAnthropic:
		return "anthropic"
	case KindOpenAI, KindOpenAIResponses:
		return "openai"
	case KindGoogle:
		return "google"
	}
	return p.Name
}

// envNames splits APIKeyEnv into variable names.
func (p Profile) envNames() []string {
	var out []string
	for _, n := range strings.Split(p.APIKeyEnv, ",") {
		if n = strings.TrimSpace(n); n != "" {
			out = append(out, n)
		}
	}
	return out
}

// Auth returns p with its credentials and address resolved from the
// environment, read through getenv (os.Getenv in the CLI; nil reads
// nothing): APIKey from the first variable of APIKeyEnv that is set, unless
// configuration gave a key; BaseURL from BaseURLEnv, unless configuration gave
// one. A missing key is not an error here; see [Profile.CheckAuth].
func Auth(p Profile, getenv func(string) string) Profile {
	if getenv == nil {
		return p
	}
	if p.APIKey == "" {
		for _, n := range p.envNames() {
			if v := strings.TrimSpace(getenv(n)); v != "" {
				p.APIKey = v
				break
			}
		}
	}
	if p.BaseURL == "" && p.BaseURLEnv != "" {
		p.BaseURL = strings.TrimSpace(getenv(p.BaseURLEnv))
	}
	return p
}

// CheckAuth returns an auth *llm.Error naming the variable to set when p
// needs a key and has none (after [Auth]); nil otherwise. `rein doctor` and
// the CLI call it before the first request.
func (p Profile) CheckAuth() error {
	if p.OAuth != nil {
		return nil // see CheckOAuth
	}
	names := p.envNames()
	if p.APIKey != "" || len(names) == 0 {
		return nil
	}
	return llm.AuthMissing(p.Name, strings.Join(names, " or "))
}
