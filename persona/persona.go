package persona

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/reinhq/rein/memory"
)

// The files of the persona directory. USER.md, the profile, is memory's
// (memory.ProfileFile under memory.UserDir).
const (
	SoulFile     = "SOUL.md"
	IdentityFile = "identity.yaml"
)

// SoulCap is the cap of SOUL.md in characters (runes).
const SoulCap = 4000

// Dir is the persona directory under rein's configuration directory
// (workspace.Paths.ConfigDir); "" when there is none.
func Dir(configDir string) string {
	if configDir == "" {
		return ""
	}
	return filepath.Join(configDir, "persona")
}

// Persona is the persona as read from its directory.
type Persona struct {
	// Dir is the persona directory ([Dir]).
	Dir      string   `json:"dir"`
	Identity Identity `json:"identity"`
	// Soul is SOUL.md's text; "" when there is none.
	Soul string `json:"soul,omitempty"`
	// SoulChars is SOUL.md's size in characters; SoulOverCap says it is
	// over [SoulCap], and then Section leaves it out.
	SoulChars   int  `json:"soul_chars"`
	SoulOverCap bool `json:"soul_over_cap,omitempty"`
	// Findings are what memory.ScanDocument found in SOUL.md: warned
	// about, not dropped (like AGENTS.md).
	Findings []memory.Finding `json:"findings,omitempty"`
	// Warnings are what people should know about the files.
	Warnings []string `json:"warnings,omitempty"`

	hasIdentity bool
}

// Bootstrapped reports whether the first-run bootstrap has been done: the
// identity file exists with a name.
func (p Persona) Bootstrapped() bool { return p.hasIdentity && p.Identity.Name != "" }

// SoulPath and IdentityPath are the persona's files.
func (p Persona) SoulPath() string     { return filepath.Join(p.Dir, SoulFile) }
func (p Persona) IdentityPath() string { return filepath.Join(p.Dir, IdentityFile) }

// Load reads the persona of dir. Missing files give the zero persona
// (Bootstrapped false) and no error. An identity file that cannot be read
// or parsed, or whose values fail [Identity.Validate], is an error. SOUL.md
// over its cap or with scanner findings is read, and warned about.
func Load(dir string) (Persona, error) {
	p := Persona{Dir: dir}
	if dir == "" {
		return p, fmt.Errorf("persona: no configuration directory: set REIN_CONFIG_DIR or HOME")
	}
	text, exists, _, err := readFile(p.IdentityPath())
	if err != nil {
		return p, fmt.Errorf("persona: %s: %w", p.IdentityPath(), err)
	}
	if exists {
		id, err := parseIdentity([]byte(text))
		if err == nil {
			err = id.Validate()
		}
		if err != nil {
			return p, fmt.Errorf("persona: %s: %w", p.IdentityPath(), err)
		}
		p.Identity, p.hasIdentity = id, true
	}
	soul, exists, truncated, err := readFile(p.SoulPath())
	if err != nil {
		return p, fmt.Errorf("persona: %s: %w", p.SoulPath(), err)
	}
	if exists {
		p.setSoul(soul, truncated)
	}
	return p, nil
}

// setSoul sets SOUL.md's text, measures and scans it.
func (p *Persona) setSoul(soul string, truncated bool) {
	p.Soul = strings.TrimSpace(soul)
	p.SoulChars = utf8.RuneCountInString(p.Soul)
	p.SoulOverCap = truncated || p.SoulChars > SoulCap
	if p.SoulOverCap {
		p.Warnings = append(p.Warnings, fmt.Sprintf("persona: %s holds %d characters, over its cap of %d: it is left out of the prompt; condense it (rein persona edit)",
			p.SoulPath(), p.SoulChars, SoulCap))
	}
	if fs := memory.ScanDocument(p.Soul); len(fs) > 0 {
		p.Findings = fs
		p.Warnings = append(p.Warnings, fmt.Sprintf("persona: %s: %s; check that it says what you mean (rein persona edit)",
			p.SoulPath(), memory.Explain(fs)))
	}
}

// Validate checks the identity and the size of SOUL.md.
func (p Persona) Validate() error {
	if err := p.Identity.Validate(); err != nil {
		return err
	}
	return checkSoul(p.Soul)
}

// checkSoul checks SOUL.md's size.
func checkSoul(soul string) error {
	if n := utf8.RuneCountInString(strings.TrimSpace(soul)); n > SoulCap {
		return fmt.Errorf("%w: SOUL.md is %d characters, over its cap of %d: condense it — it goes into every system prompt",
			ErrInvalid, n, SoulCap)
	}
	return nil
}

// Save validates p and writes identity.yaml and, when p.Soul is not
// empty, SOUL.md to p.Dir, atomically and privately.
func Save(p Persona) error {
	if p.Dir == "" {
		return fmt.Errorf("persona: no configuration directory: set REIN_CONFIG_DIR or HOME")
	}
	if err := p.Validate(); err != nil {
		return fmt.Errorf("persona: %w; nothing was written", err)
	}
	data, err := renderIdentity(p.Identity)
	if err != nil {
		return fmt.Errorf("persona: %w", err)
	}
	if soul := strings.TrimSpace(p.Soul); soul != "" {
		if err := writeAtomic(p.SoulPath(), []byte(soul+"\n")); err != nil {
			return fmt.Errorf("persona: write %s: %w", p.SoulPath(), err)
		}
	}
	// The identity last: it marks the bootstrap as done.
	if err := writeAtomic(p.IdentityPath(), data); err != nil {
		return fmt.Errorf("persona: write %s: %w", p.IdentityPath(), err)
	}
	return nil
}

// Reset removes SOUL.md and identity.yaml from dir, so the next chat runs
// the bootstrap again. USER.md, the profile, is memory's and is kept,
// unless profile is a store: then its profile file is removed too (and
// its index rewritten). Reset returns the files it removed.
func Reset(ctx context.Context, dir string, profile *memory.Store) ([]string, error) {
	if dir == "" {
		return nil, fmt.Errorf("persona: no configuration directory: set REIN_CONFIG_DIR or HOME")
	}
	paths := []string{filepath.Join(dir, SoulFile), filepath.Join(dir, IdentityFile)}
	if profile != nil {
		p, err := profile.Path(memory.ScopeUser, memory.TargetProfile)
		if err != nil {
			return nil, fmt.Errorf("persona: %w", err)
		}
		paths = append(paths, p)
	}
	var removed []string
	for _, p := range paths {
		ok, err := removeFile(p)
		if err != nil {
			return removed, fmt.Errorf("persona: remove %s: %w", p, err)
		}
		if ok {
			removed = append(removed, p)
		}
	}
	if profile != nil {
		if err := profile.Reindex(ctx, memory.ScopeUser); err != nil {
			return removed, fmt.Errorf("persona: the profile was removed, but memory's index was not rewritten: %w", err)
		}
	}
	return removed, nil
}

// Section renders the persona's part of a system prompt: "# Persona",
// the name and avatar, and SOUL.md (left out when over its cap; kept,
// with warnings, when the scanner found something — like AGENTS.md). The
// profile is not repeated: memory's section holds it. It is "" for a
// persona without a name or soul. The gateway's runs carry it
// (runner.ServiceConfig.Persona, read at each run's start).
func (p Persona) Section() string {
	soul := p.Soul
	if p.SoulOverCap {
		soul = ""
	}
	if p.Identity.Name == "" && soul == "" {
		return ""
	}
	var b strings.Builder
	b.WriteString("# Persona\n\n")
	if p.Identity.Name != "" {
		b.WriteString("You are " + p.Identity.Name)
		if p.Identity.Avatar != "" {
			b.WriteString(" (avatar: " + p.Identity.Avatar + ")")
		}
		b.WriteString(", the user's personal agent.\n")
	}
	if soul != "" {
		if p.Identity.Name != "" {
			b.WriteString("\n")
		}
		b.WriteString("## Who you are (" + p.SoulPath() + ")\n\n")
		b.WriteString(soul)
		b.WriteString("\n")
	}
	return b.String()
}

// EnsureSoul creates an empty SOUL.md in dir, privately, when there is none
// (for a person to edit), and returns its path.
func EnsureSoul(dir string) (string, error) {
	if dir == "" {
		return "", fmt.Errorf("persona: no configuration directory: set REIN_CONFIG_DIR or HOME")
	}
	path := filepath.Join(dir, SoulFile)
	_, exists, _, err := readFile(path)
	switch {
	case err != nil:
		return "", fmt.Errorf("persona: %s: %w", path, err)
	case exists:
		return path, nil
	}
	if err := writeAtomic(path, nil); err != nil {
		return "", fmt.Errorf("persona: write %s: %w", path, err)
	}
	return path, nil
}
