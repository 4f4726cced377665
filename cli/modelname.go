package cli

import (
	"fmt"
	"strings"
	"unicode"

	"github.com/reinhq/rein/internal/suggest"
	"github.com/reinhq/rein/llm/registry"
)

// checkModelName looks at a model name the registry does not know (SPEC
// PROV-1, CLI-1). A name a few letters from a known one of the same
// vendor is a typo: it is refused with "did you mean", rather than sent
// to fail at the provider (or worse, to reach another model). A name that
// differs from a known one only in its digits may be a newer version: it
// is sent, and the warning names the known one. Anything else keeps the
// registry's warning.
func checkModelName(reg *registry.Registry, r registry.Resolved) (warning string, err error) {
	if r.Warning == "" {
		return "", nil
	}
	vendor := vendorOf(r.Profile)
	var names []string
	for _, m := range reg.Models() {
		if m.Provider == vendor {
			names = append(names, m.Name)
		}
	}
	near := suggest.Closest(r.Model, names, 1)
	if len(near) == 0 {
		return r.Warning, nil
	}
	best := near[0]
	switch d := suggest.Distance(strings.ToLower(r.Model), strings.ToLower(best)); {
	case withoutDigits(r.Model) == withoutDigits(best):
		return fmt.Sprintf("%s (did you mean %s/%s?)", r.Warning, r.Profile.Name, best), nil
	case d <= 2 || d*5 <= len(best):
		return "", fmt.Errorf("model %s/%s: rein knows no model %s for %s; did you mean %s/%s?\n"+
			"If the name is right (a model newer than rein's table), add it to .rein/models.yaml to use it",
			r.Profile.Name, r.Model, r.Model, r.Profile.Name, r.Profile.Name, best)
	}
	return r.Warning, nil
}

// vendorOf is the table of models a profile serves: the vendor of a
// first-party kind, the profile's own name for an OpenAI-compatible
// endpoint.
func vendorOf(p registry.Profile) string {
	switch p.Provider {
	case registry.KindOpenAI, registry.KindOpenAIResponses:
		return "openai"
	case registry.KindAnthropic, registry.KindGoogle:
		return p.Provider
	}
	return p.Name
}

// withoutDigits is s in lower case with its digits and the separators
// around versions dropped: "claude-sonnet-4-6" → "claudesonnet".
func withoutDigits(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsDigit(r) || r == '-' || r == '.' || r == '_' {
			return -1
		}
		return unicode.ToLower(r)
	}, s)
}
