package runner

import (
	"github.com/reinhq/rein/memory"
	"github.com/reinhq/rein/workspace"
)

// newMemory is the memory store of the engine (SPEC MEM-1, MEM-4): the
// user's under rein's configuration directory — unless the front end
// serves other people (Config.NoUserMemory: a server's callers must not
// read the operator's profile) — and the workspace's under .rein/memory;
// nil when the memory setting is off or neither place exists.
func (e *Engine) newMemory() *memory.Store {
	if e.ev != nil && e.ev.String(workspace.Memory) == "off" {
		return nil
	}
	cfg := memory.Config{WorkspaceDir: memory.WorkspaceDir(e.ws.Root)}
	if !e.cfg.NoUserMemory {
		cfg.UserDir = memory.UserDir(e.cfg.Loaded.Paths.ConfigDir)
	}
	if e.cfg.NoTools {
		cfg.WorkspaceDir = "" // a chat workspace has no directory of its own
	}
	if cfg.UserDir == "" && cfg.WorkspaceDir == "" {
		return nil
	}
	return memory.New(cfg)
}

// Memory returns the engine's memory store, nil when memory is off.
func (e *Engine) Memory() *memory.Store { return e.memory }

// readMemory reads memory for the system prompt: its section and what
// people should know about it (entries refused by the scanner, files
// cut). A replayed run has none: its prompt is the recording's.
func (e *Engine) readMemory() (section string, warnings []string) {
	if e.memory == nil || (e.model != nil && e.model.Frame != nil) {
		return "", nil
	}
	snap := e.memory.Snapshot()
	return memory.Section(snap), snap.Warnings
}

// refreshMemory freezes memory for the next run (SPEC MEM-1): read at the
// run's start, and when it changed since the system prompt was built —
// the memory tool or a person wrote to it — the prompt is built again. Within a
// run the prompt stays byte-stable, so its cache prefix holds.
func (e *Engine) refreshMemory() error {
	if e.memory == nil || e.model == nil {
		return nil
	}
	section, warnings := e.readMemory()
	e.memoryWarnings = warnings
	if section == e.memorySection {
		return nil
	}
	system, err := e.buildSystem(e.model)
	if err != nil {
		return err
	}
	e.system = system
	return nil
}
