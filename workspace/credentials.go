package workspace

import (
	"fmt"
	"slices"
	"strings"

	"github.com/reinhq/rein/hook"
	"github.com/reinhq/rein/internal/secretenv"
	"github.com/reinhq/rein/llm/registry"
)

// This file keeps rein's credentials away from what a workspace declares
// (SPEC PERM-5, MCP-2): a repository's .mcp.json, hooks or actions must
// not be able to name the user's provider key and receive it, trusted or
// not. Only the user's own configuration may name them.

// refusedCredentials is why a declaration named one of rein's
// credentials runs (or is left out) without it, in every warning.
const refusedCredentials = "a workspace's declaration never receives rein's credentials (provider keys and OAuth tokens, your profiles' key variables, REIN_* variables)"

// isCredential reports whether a variable is one of rein's credentials,
// given the variables the user's provider profiles read keys from: a
// provider key or OAuth token (secretenv.ProviderCredentials, the
// built-in profiles' key variables), any REIN_* variable (rein's own
// configuration: server tokens, database URLs), or a profile's
// api_key_env. Other secrets (GITHUB_TOKEN, a deploy key) are the user's
// to hand to a trusted workspace's declaration that names them, as SPEC
// PERM-5 says; rein's own credentials never are (MCP-2).
func isCredential(name string, profileKeys []string) bool {
	n := strings.ToUpper(strings.TrimSpace(name))
	return slices.Contains(secretenv.ProviderCredentials, n) || strings.HasPrefix(n, "REIN_") || slices.Contains(profileKeys, n)
}

// profileKeyVars are the variables the profiles read their keys from,
// upper-cased.
func profileKeyVars(profiles []registry.Profile) []string {
	var out []string
	for _, p := range profiles {
		for _, v := range strings.Split(p.APIKeyEnv, ",") {
			if v = strings.ToUpper(strings.TrimSpace(v)); v != "" {
				out = append(out, v)
			}
		}
	}
	return out
}

// credentialCheck returns [isCredential] over the profiles of the user's
// config.yaml at p (none when it cannot be read: the names alone still
// decide).
func credentialCheck(p Paths) func(string) bool {
	profiles, _ := LoadProfiles(p.ProfilesFile())
	keys := profileKeyVars(profiles.Profiles)
	return func(name string) bool { return isCredential(name, keys) }
}

// Credential reports whether a workspace's declaration would be refused
// the variable name: one of rein's credentials (a provider key or OAuth
// token, a REIN_* variable, or a key variable of the user's provider
// profiles).
func (l *Loaded) Credential(name string) bool {
	return isCredential(name, profileKeyVars(l.Profiles.Profiles))
}

// withoutCredentials returns the names of env that are not credentials,
// and those that are.
func withoutCredentials(env []string, credential func(string) bool) (kept, refused []string) {
	for _, name := range env {
		if credential(name) {
			refused = append(refused, name)
		} else {
			kept = append(kept, name)
		}
	}
	return kept, refused
}

// screenHookEnv takes rein's credentials out of the env lists of the
// workspace's hooks (env: [OPENAI_API_KEY], allowedEnvVars): the hook
// still runs — it may guard something — without them, and a warning
// names each.
func (l *Loaded) screenHookEnv() {
	for i := range l.hooks {
		f := &l.hooks[i]
		if !f.workspace {
			continue
		}
		for j := range f.specs {
			s := &f.specs[j]
			kept, refused := withoutCredentials(s.Env, l.Credential)
			if len(refused) == 0 {
				continue
			}
			s.Env = kept
			l.Refused = append(l.Refused, fmt.Sprintf("workspace %s: hook %s names %s in env; it runs without: %s — declare the hook in your user hooks (%s) to pass it",
				l.rel(f.path), hookName(*s), strings.Join(refused, ", "), refusedCredentials, l.Paths.UserHooks()))
		}
	}
}

// hookName names a hook in a warning: its name, or its event and command.
func hookName(s hook.Spec) string {
	if s.Name != "" {
		return s.Name
	}
	return describeHook(hook.Spec{Event: s.Event, Matcher: s.Matcher, Command: s.Command, URL: s.URL})
}

// credentialWarnings are the problems of the workspace's definitions that
// are refused credentials, as warnings: they matter whether or not the
// workspace is trusted.
func (l *Loaded) credentialWarnings(probs []Problem) []string {
	var out []string
	for _, p := range probs {
		if p.Credential {
			p.Path = l.rel(p.Path)
			out = append(out, "workspace "+p.String())
		}
	}
	return out
}
