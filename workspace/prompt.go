package workspace

import (
	"fmt"
	"maps"

	"github.com/reinhq/rein/memory"
)

// PromptSettings are the settings that put text into the system prompt:
// from a workspace file they apply only once the workspace is trusted,
// are listed as extras until then (SPEC PERM-5), and once applied are
// scanned like AGENTS.md ([Loaded.screenPrompts]). Flags and REIN_*
// variables, the user's own, set them freely.
var PromptSettings = []string{SystemPrompt, AppendSystemPrompt}

// screenPrompts returns the layer of a trusted workspace file without the
// prompt settings whose text the memory scanner's document rules flag
// (SPEC MEM-3: invisible or bidirectional characters, exfiltration,
// orders to override instructions or hide actions), each withheld with a
// warning naming the findings: trust covers what the user reviewed, and
// a phrase made to steer the model is worth a second look.
func (l *Loaded) screenPrompts(layer Layer) Layer {
	copied := false
	for _, name := range PromptSettings {
		v, ok := layer.Values[name]
		if !ok {
			continue
		}
		fs := memory.ScanDocument(v)
		if len(fs) == 0 {
			continue
		}
		if !copied {
			layer.Values, copied = maps.Clone(layer.Values), true
		}
		delete(layer.Values, name)
		l.Warnings = append(l.Warnings, fmt.Sprintf("workspace %s: %s withheld from the system prompt: it looks like a prompt injection: %s; review and edit it (rein goes on without it)",
			l.rel(layer.Origin), name, memory.Explain(fs)))
	}
	return layer
}
