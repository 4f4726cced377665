package runner

import (
	"github.com/reinhq/rein/memory"
	"github.com/reinhq/rein/workspace"
)

// newMemory is the memory store of the setup (SPEC MEM-1, MEM-4): the
// user's under rein's configuration directory — unless the front end
// serves other people (Config.NoUserMemory: a server's callers must not
// read the operator's profile) — and the workspace's under .rein/memory;
// nil when the memory setting is off or neither place exists.
func (s *Setup) newMemory() *memory.Store {
	if s.ev != nil && s.ev.String(workspace.Memory) == "off" {
		return nil
	}
	cfg := memory.Config{WorkspaceDir: memory.WorkspaceDir(s.ws.Root)}
	if !s.cfg.NoUserMemory {
		cfg.UserDir = memory.UserDir(s.cfg.Loaded.Paths.ConfigDir)
	}
	if s.cfg.NoTools {
		cfg.WorkspaceDir = "" // a chat workspace has no directory of its own
	}
	if cfg.UserDir == "" && cfg.WorkspaceDir == "" {
		return nil
	}
	return memory.New(cfg)
}

// Memory returns the setup's memory store, nil when memory is off.
func (s *Setup) Memory() *memory.Store { return s.memory }

// readMemory reads memory for the system prompt: its section and what
// people should know about it (entries refused by the scanner, files
// cut). A replayed run has none: its prompt is the recording's.
func (s *Setup) readMemory() (section string, warnings []string) {
	if s.memory == nil || (s.model != nil && s.model.Frame != nil) {
		return "", nil
	}
	snap := s.memory.Snapshot()
	return memory.Section(snap), snap.Warnings
}

// refreshMemory freezes memory for the next run (SPEC MEM-1): read at the
// run's start, and when it changed since the system prompt was built —
// the memory tool or a person wrote to it — the prompt is built again.
// Within a run the prompt stays byte-stable, so its cache prefix holds.
func (c *Conversation) refreshMemory() {
	section, warnings := c.s.readMemory()
	c.memoryWarnings = warnings
	if c.system != "" && section == c.memorySection {
		return
	}
	c.system, c.memorySection = c.s.systemPrompt(section), section
}
