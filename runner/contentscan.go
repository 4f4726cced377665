package runner

import (
	"fmt"
	"path/filepath"

	"github.com/reinhq/rein/workspace"
)

// ScanInstructions checks what a workspace and the user put in front of
// the model — AGENTS.md (named agentsPath, read as agentsMD), agents'
// prompts and descriptions, skills' descriptions and bodies — with the
// memory scanner's document rules (SPEC MEM-3: invisible or bidirectional
// characters, exfiltration, orders to override instructions or hide
// actions). It returns one warning per file with findings, relative to
// root where it can. Nothing is dropped: a person wrote these and may mean
// them; run_start and `rein doctor` say what to review.
func ScanInstructions(root, agentsMD, agentsPath string, defs *workspace.Definitions) []string {
	var out []string
	warn := func(path, what, text string) {
		if why := ScreenText(text); why != "" {
			if rel, err := filepath.Rel(root, path); err == nil && filepath.IsLocal(rel) {
				path = rel
			}
			out = append(out, fmt.Sprintf("%s (%s) looks like a prompt injection: %s; review it — rein still loads it",
				path, what, why))
		}
	}
	if agentsMD != "" {
		warn(filepath.Join(root, agentsPath), "project instructions", agentsMD)
	}
	for _, a := range defs.Agents {
		if a.Origin != workspace.OriginBuiltin {
			warn(a.Path, "agent "+a.Name, a.Description+"\n\n"+a.Prompt)
		}
	}
	for _, s := range defs.Skills {
		if s.Origin == workspace.OriginBuiltin {
			continue
		}
		text := s.Description
		if body, err := s.Body(); err == nil {
			text += "\n\n" + body
		}
		warn(s.Path, "skill "+s.Name, text)
	}
	return out
}
