package workspace

import (
	"testing"

	"github.com/reinhq/rein/permission"
)

// FuzzParseSettings: any input parses or fails cleanly, and every value
// that parses is one its key accepts.
func FuzzParseSettings(f *testing.F) {
	for _, s := range []string{
		"", "model: gpt-5\n", "permissions:\n  mode: bypass\n  allow: [bash]\n", "max_turns: 3\ntimeout: 5m\n",
		"- a\n", "{model: [1]}", "permissions: ~\n", "a: &x 1\nb: *x\n", "\xff\xfe",
		"sandbox:\n  profile: read-only\n  allow_hosts: [registries, \"localhost:3000\"]\n  writable: [~/x, /y/../z]\n",
		"sandbox: {network: on, caches: isolated, allow_hosts: a.test}\n", "sandbox:\n  allow_hosts: [[a]]\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := ParseSettings(data, permission.SourceUser)
		if err != nil {
			return
		}
		for name, v := range s.Values {
			k, ok := Lookup(name)
			if !ok {
				t.Fatalf("value for unknown key %q", name)
			}
			if got, err := k.Check(v); err != nil || got != v {
				t.Fatalf("key %s: stored value %q re-checks as %q, %v", name, v, got, err)
			}
		}
	})
}

// FuzzParseProfiles: config.yaml never panics the parser, and what parses
// has named, distinct profiles.
func FuzzParseProfiles(f *testing.F) {
	for _, s := range []string{
		"", "default: a\nprofiles:\n  - {name: a, provider: openai}\n", "profiles: [{}]", "x: 1", "profiles:\n  - name: a\n  - name: a\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := ParseProfiles(data)
		if err != nil {
			return
		}
		seen := map[string]bool{}
		for _, pr := range p.Profiles {
			if pr.Name == "" || seen[pr.Name] {
				t.Fatalf("accepted profiles %+v", p.Profiles)
			}
			seen[pr.Name] = true
		}
	})
}

// FuzzParseModels: models.yaml never panics the parser.
func FuzzParseModels(f *testing.F) {
	f.Add([]byte("models:\n  - {name: m, provider: p}\n"))
	f.Add([]byte("models: 1"))
	f.Fuzz(func(t *testing.T, data []byte) {
		ms, err := ParseModels(data)
		if err != nil {
			return
		}
		for _, m := range ms {
			if m.Name == "" || m.Provider == "" {
				t.Fatalf("accepted model %+v", m)
			}
		}
	})
}
