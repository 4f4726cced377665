package workspace

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"go.yaml.in/yaml/v3"

	"github.com/reinhq/rein/internal/atomicfile"
	"github.com/reinhq/rein/llm/registry"
)

// Profiles is the user's config.yaml: provider profiles (SPEC PROV-3) and
// the one `rein provider use` made the default.
//
//	default: work
//	profiles:
//	  - name: work
//	    provider: openai-compatible
//	    base_url: https://llm.example.com/v1
//	    api_key_env: WORK_LLM_KEY
//	    default_model: qwen3-coder
//	aliases:                       # model aliases (SPEC COMPAT-1)
//	  sonnet: claude-sonnet-4-5    # replaces the built-in entry
//	  fast: openrouter/anthropic/claude-haiku-4.5
type Profiles struct {
	// Default names the profile (or model) used when no layer sets a model.
	Default  string             `yaml:"default,omitempty"`
	Profiles []registry.Profile `yaml:"profiles,omitempty"`
	// Aliases are the user's model aliases: a name to a model string (never
	// an endpoint); they replace the built-in sonnet, opus and haiku
	// (registry.Config.Aliases).
	Aliases map[string]string `yaml:"aliases,omitempty"`
	// Path is the file read; empty for a parsed document.
	Path string `yaml:"-"`
}

// ParseProfiles reads a config.yaml document. Profiles are checked by
// registry.New, which the caller builds from them; here each needs a name,
// once.
func ParseProfiles(data []byte) (Profiles, error) {
	var p Profiles
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&p); err != nil && !errors.Is(err, io.EOF) {
		return Profiles{}, fmt.Errorf("not a valid config file: %w", err)
	}
	seen := map[string]bool{}
	for i, pr := range p.Profiles {
		if pr.Name == "" {
			return Profiles{}, fmt.Errorf("profiles[%d]: a profile needs a name", i)
		}
		if seen[pr.Name] {
			return Profiles{}, fmt.Errorf("profiles[%d]: profile %q is declared twice", i, pr.Name)
		}
		seen[pr.Name] = true
	}
	return p, nil
}

// LoadProfiles reads config.yaml; a missing file holds no profiles.
func LoadProfiles(path string) (Profiles, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return Profiles{Path: path}, nil
	}
	if err != nil {
		return Profiles{}, err
	}
	p, err := ParseProfiles(data)
	if err != nil {
		return Profiles{}, fmt.Errorf("%s: %w", path, err)
	}
	p.Path = path
	return p, nil
}

// Put adds or replaces the profile called pr.Name.
func (p *Profiles) Put(pr registry.Profile) {
	for i := range p.Profiles {
		if p.Profiles[i].Name == pr.Name {
			p.Profiles[i] = pr
			return
		}
	}
	p.Profiles = append(p.Profiles, pr)
}

// Remove deletes the profile called name and reports whether it was there.
// A removed default is no longer the default.
func (p *Profiles) Remove(name string) bool {
	for i := range p.Profiles {
		if p.Profiles[i].Name == name {
			p.Profiles = append(p.Profiles[:i], p.Profiles[i+1:]...)
			if p.Default == name {
				p.Default = ""
			}
			return true
		}
	}
	return false
}

const profilesHeader = "# rein's provider profiles: `rein provider add|use|list` edit this file.\n"

// Save writes the profiles to path atomically (a temporary file renamed over
// it), creating the directory. The file is private (0600): it may hold keys.
func (p Profiles) Save(path string) error {
	body, err := yaml.Marshal(p)
	if err != nil {
		return err
	}
	return WriteFileAtomic(path, append([]byte(profilesHeader), body...), 0o600)
}

// WriteFileAtomic writes data to path through a temporary file in the same
// directory, synced and renamed over path, creating the directory (0700).
func WriteFileAtomic(path string, data []byte, perm fs.FileMode) error {
	return atomicfile.Write(path, data, perm)
}

// modelsFile is .rein/models.yaml: models added to the registry's table,
// and model aliases the workspace adds (SPEC COMPAT-1).
//
//	models:
//	  - {name: qwen3-coder, provider: ollama, context_window: 262144, max_output: 65536}
//	aliases:
//	  review: claude-opus-4-5      # new names only: sonnet, opus, haiku stay the user's
type modelsFile struct {
	Models  []registry.Model  `yaml:"models"`
	Aliases map[string]string `yaml:"aliases,omitempty"`
}

// ParseModels reads a models.yaml document's models.
func ParseModels(data []byte) ([]registry.Model, error) {
	m, err := parseModelsFile(data)
	return m.Models, err
}

// ParseModelAliases reads a models.yaml document's aliases.
func ParseModelAliases(data []byte) (map[string]string, error) {
	m, err := parseModelsFile(data)
	return m.Aliases, err
}

func parseModelsFile(data []byte) (modelsFile, error) {
	var m modelsFile
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&m); err != nil && !errors.Is(err, io.EOF) {
		return modelsFile{}, fmt.Errorf("not a valid models file: %w", err)
	}
	for i, md := range m.Models {
		if md.Name == "" || md.Provider == "" {
			return modelsFile{}, fmt.Errorf("models[%d]: name and provider are required", i)
		}
	}
	return m, nil
}

// RegistryConfig is the model registry's configuration of what l read:
// the user's profiles and aliases, the workspace's models and aliases
// (.rein/models.yaml, read again here: a workspace's aliases may only add
// names, see registry.Config.WorkspaceAliases). A models file that no
// longer parses is an error naming it.
func (l *Loaded) RegistryConfig(getenv func(string) string) (registry.Config, error) {
	cfg := registry.Config{Profiles: l.Profiles.Profiles, Models: l.Models, Getenv: getenv, Aliases: l.Profiles.Aliases}
	if l.Workspace.Root == "" {
		return cfg, nil
	}
	data, err := readConfig(l.Workspace.Models())
	if errors.Is(err, fs.ErrNotExist) {
		return cfg, nil
	}
	if err != nil {
		return cfg, err
	}
	if cfg.WorkspaceAliases, err = ParseModelAliases(data); err != nil {
		return cfg, fmt.Errorf("%s: %w", l.Workspace.Models(), err)
	}
	return cfg, nil
}

// LoadModels reads a models.yaml file; a missing file adds no models.
func LoadModels(path string) ([]registry.Model, error) {
	data, err := readConfig(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	m, err := ParseModels(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return m, nil
}

// screenModels drops the workspace's models that redefine one rein knows
// (a built-in entry, directly or through an OpenRouter-style name of one
// of the user's profiles), each with a warning: a repository's
// .rein/models.yaml is for models rein does not know, and must not lower a
// known model's price — which subagents.max_cost counts against — nor
// change its context window or output cap (issue 22's second probes).
func (l *Loaded) screenModels() {
	if len(l.Models) == 0 {
		return
	}
	known, err := registry.New(registry.Config{Profiles: l.Profiles.Profiles})
	if err != nil {
		return // the profiles are wrong: the run fails on them anyway
	}
	kept := l.Models[:0:0]
	for _, m := range l.Models {
		if _, ok := known.Lookup(m.Provider, m.Name); ok {
			l.Warnings = append(l.Warnings, fmt.Sprintf("workspace %s redefines the known model %s/%s; ignored: a workspace may only add models rein does not know (its price, context window and output cap stay rein's)",
				l.rel(l.Workspace.Models()), m.Provider, m.Name))
			continue
		}
		kept = append(kept, m)
	}
	l.Models = kept
}
