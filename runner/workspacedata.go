package runner

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/reinhq/rein/kb"
	"github.com/reinhq/rein/llm/registry"
	"github.com/reinhq/rein/memory"
	"github.com/reinhq/rein/session"
	"github.com/reinhq/rein/tool/mcptool"
	"github.com/reinhq/rein/workspace"
)

// What a server shows of a workspace besides its sessions (SPEC API-1,
// API-10): the catalog of what its runs may use, its memory, its knowledge
// base. Each is read as a run of the workspace reads it — the same
// configuration layers, trust, memory store and knowledge base — from the
// directory the caller opened (the server checked that the workspace is
// the caller's). Errors the caller can fix wrap session.ErrInvalid.

// Catalog is what a run in a workspace may use.
type Catalog struct {
	Trusted      bool
	Kind         string // project or chat
	Agents       []CatalogAgent
	Skills       []CatalogItem
	Actions      []CatalogItem
	Commands     []CatalogItem
	MCPServers   []CatalogMCP
	Models       []registry.Model
	DefaultModel string
}

// CatalogAgent is an agent definition of the catalog.
type CatalogAgent struct{ Name, Description, Model string }

// CatalogItem is a skill, an action or a command of the catalog.
type CatalogItem struct{ Name, Description string }

// CatalogMCP is an MCP server of the catalog and its state in this
// process: connected, connecting, idle (no run here used it yet), failed,
// disabled or untrusted.
type CatalogMCP struct {
	Name, Transport, State, Error string
	Tools                         int
}

// MemoryNote is a note of a workspace's memory with the scanner's verdict:
// ok, withheld: … or over_cap.
type MemoryNote struct {
	ID, Text, Verdict string
	// Added: the note was added by the call that returned it (not kept
	// already).
	Added bool
}

// wsLoaded is a workspace loaded as its runs load it.
type wsLoaded struct {
	l    *workspace.Loaded
	chat bool
}

// loadServerWorkspace loads a server workspace's configuration as a run
// does (execute.go's setup, kbshared.go's loadWorkspace): a project
// workspace from its directory — refused when the directory is now a link
// elsewhere — and a chat workspace from no directory of its own.
func (s *Service) loadServerWorkspace(ws *session.Workspace) (*wsLoaded, error) {
	chat := ws.Kind == session.WorkspaceChat
	dir := filepath.Join(s.cfg.DataDir, "chat")
	if !chat {
		if err := checkWorkspaceDir(ws); err != nil {
			return nil, fmt.Errorf("%w: %v", session.ErrInvalid, err)
		}
		dir = ws.Dir
	}
	l, err := s.loadWorkspace(ws.Caller, dir, nil)
	if err != nil {
		return nil, fmt.Errorf("%w: workspace %s: %v", session.ErrInvalid, ws.ID, err)
	}
	if l.Effective != nil && l.Effective.String(workspace.WorkspaceKind) == "chat" {
		chat = true
	}
	return &wsLoaded{l: l, chat: chat}, nil
}

// Catalog lists what a run in the workspace may use. It starts no MCP
// server: their state is that of the connections this process's runs
// opened (the service's pool).
func (s *Service) Catalog(ctx context.Context, ws *session.Workspace) (*Catalog, error) {
	w, err := s.loadServerWorkspace(ws)
	if err != nil {
		return nil, err
	}
	setup, err := NewSetup(Config{Loaded: w.l, Store: s.cfg.Sessions, SessionsDir: s.cfg.DataDir, Resolve: s.cfg.Resolve,
		NoTools: w.chat, NoUserMemory: !s.cfg.UserMemory, MCP: &s.mcp, Tenancy: s.cfg.Tenancy, Getenv: s.cfg.Getenv,
		Logger: s.cfg.Logger, Now: s.cfg.Now})
	if err != nil {
		return nil, fmt.Errorf("%w: workspace %s: %v", session.ErrInvalid, ws.ID, err)
	}
	defer setup.Close()
	c := &Catalog{Trusted: w.l.Trust.Trusted, Kind: string(session.WorkspaceProject), Models: setup.Registry().Models(),
		DefaultModel: setup.ModelSpec(nil)}
	if w.chat {
		c.Kind = string(session.WorkspaceChat)
	}
	defs := w.l.Definitions()
	for _, a := range defs.Agents {
		c.Agents = append(c.Agents, CatalogAgent{Name: a.Name, Description: a.Description, Model: a.Model})
	}
	for _, cmd := range defs.Commands {
		c.Commands = append(c.Commands, CatalogItem{Name: cmd.Name, Description: cmd.Description})
	}
	if w.chat {
		return c, nil // no tools: no skills, actions or MCP servers (WS-2)
	}
	for _, sk := range defs.Skills {
		c.Skills = append(c.Skills, CatalogItem{Name: sk.Name, Description: sk.Description})
	}
	for _, a := range defs.Actions {
		c.Actions = append(c.Actions, CatalogItem{Name: a.Name, Description: a.Description})
	}
	c.MCPServers = setup.mcpCatalog(s.mcp.peek(setup.mcpServers()))
	return c, nil
}

// mcpCatalog lists the MCP servers of the workspace — those an untrusted
// workspace declares as untrusted — with the state m (nil: none started)
// reports.
func (s *Setup) mcpCatalog(m *mcptool.Manager) []CatalogMCP {
	states := map[string]mcptool.Status{}
	if m != nil {
		for _, st := range m.Status() {
			states[st.Server] = st
		}
	}
	applies := map[string]bool{}
	for _, d := range s.cfg.Loaded.Definitions().MCP {
		applies[d.Name] = true
	}
	var out []CatalogMCP
	for _, d := range s.cfg.Loaded.AllDefinitions().MCP {
		e := CatalogMCP{Name: d.Name, Transport: "stdio", State: "idle"}
		switch {
		case d.Transport == "sse":
			e.Transport = "sse"
		case d.URL != "":
			e.Transport = "http"
		}
		st, started := states[d.Name]
		switch {
		case !applies[d.Name]:
			e.State = "untrusted"
		case d.Disabled:
			e.State = "disabled"
		case !started:
		case st.State == mcptool.StateReady && st.Withheld:
			e.State, e.Error = "failed", "withheld for review: its screening flagged something (rein mcp list)"
		case st.State == mcptool.StateReady:
			e.State, e.Tools = "connected", st.Tools
		case st.State == mcptool.StateConnecting || st.State == mcptool.StateReconnecting:
			e.State, e.Error = "connecting", st.Err
		default:
			e.State, e.Error = "failed", st.Err
		}
		out = append(out, e)
	}
	return out
}

// peek returns the manager of servers if one was started, nil otherwise;
// it starts nothing.
func (p *MCPPool) peek(servers []mcptool.Server) *mcptool.Manager {
	if len(servers) == 0 {
		return nil
	}
	key := poolKey(servers)
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.managers[key]
}

// workspaceMemory is the memory store runs of the workspace use, nil when
// it has none (a chat workspace, memory turned off). A server's runs keep
// no user memory unless the service shows it (UserMemory).
func (s *Service) workspaceMemory(ws *session.Workspace) (*memory.Store, error) {
	w, err := s.loadServerWorkspace(ws)
	if err != nil {
		return nil, err
	}
	if w.chat || w.l.Effective != nil && w.l.Effective.String(workspace.Memory) == "off" {
		return nil, nil
	}
	return memory.New(memory.Config{WorkspaceDir: memory.WorkspaceDir(w.l.Workspace.Root)}), nil
}

// NoteID is the id of a memory note: derived from its text.
func NoteID(text string) string {
	sum := sha256.Sum256([]byte(text))
	return hex.EncodeToString(sum[:8])
}

// MemoryNotes lists the workspace's notes, in file order, each with the
// scanner's verdict as the system prompt applies it.
func (s *Service) MemoryNotes(_ context.Context, ws *session.Workspace) ([]MemoryNote, error) {
	store, err := s.workspaceMemory(ws)
	if err != nil || store == nil {
		return nil, err
	}
	var out []MemoryNote
	for _, f := range store.Snapshot().Files {
		if f.Scope != memory.ScopeWorkspace || f.Target != memory.TargetNotes {
			continue
		}
		for _, e := range f.Entries {
			n := MemoryNote{ID: NoteID(e.Text), Text: e.Text, Verdict: "ok"}
			switch {
			case len(e.Findings) > 0:
				n.Verdict = fmt.Sprintf("withheld: %s (rule %s)", memory.Explain(e.Findings), memory.Rules(e.Findings))
			case e.OverCap:
				n.Verdict = "over_cap"
			case len(f.Findings) > 0:
				n.Verdict = fmt.Sprintf("withheld: read together, the notes say %s (rule %s)", memory.Explain(f.Findings), memory.Rules(f.Findings))
			}
			out = append(out, n)
		}
	}
	return out, nil
}

// AddMemoryNote adds a note to the workspace's memory through the memory
// tool's path (memory.Store.Add: the scanner, deduplication, the cap); a
// refusal wraps session.ErrInvalid and says what the scanner found.
func (s *Service) AddMemoryNote(ctx context.Context, ws *session.Workspace, text, scope string) (MemoryNote, error) {
	switch memory.Scope(scope) {
	case "", memory.ScopeWorkspace:
	case memory.ScopeUser:
		return MemoryNote{}, fmt.Errorf("%w: scope user: a server keeps no user memory (its callers are other people than its operator); use scope workspace", session.ErrInvalid)
	default:
		return MemoryNote{}, fmt.Errorf("%w: scope %q: use workspace", session.ErrInvalid, scope)
	}
	store, err := s.workspaceMemory(ws)
	if err != nil {
		return MemoryNote{}, err
	}
	if store == nil {
		return MemoryNote{}, fmt.Errorf("%w: workspace %s has no memory: a chat workspace has none, and a project's settings may turn it off (memory: off)", session.ErrInvalid, ws.ID)
	}
	ch, err := store.Add(ctx, memory.ScopeWorkspace, memory.TargetNotes, text)
	if err != nil {
		if errors.Is(err, memory.ErrRefused) || errors.Is(err, memory.ErrTooLong) || errors.Is(err, memory.ErrNoScope) || !strings.HasPrefix(err.Error(), "memory:") {
			return MemoryNote{}, fmt.Errorf("%w: %v", session.ErrInvalid, err)
		}
		return MemoryNote{}, err
	}
	return MemoryNote{ID: NoteID(ch.Entry), Text: ch.Entry, Verdict: "ok", Added: ch.Action == memory.Added}, nil
}

// DeleteMemoryNote removes the note id from the workspace's memory; an id
// no note has wraps session.ErrNotFound.
func (s *Service) DeleteMemoryNote(ctx context.Context, ws *session.Workspace, id string) error {
	notes, err := s.MemoryNotes(ctx, ws)
	if err != nil {
		return err
	}
	for _, n := range notes {
		if n.ID != id {
			continue
		}
		store, err := s.workspaceMemory(ws)
		if err != nil {
			return err
		}
		if _, err := store.Remove(ctx, memory.ScopeWorkspace, memory.TargetNotes, n.Text); err != nil {
			if errors.Is(err, memory.ErrNoMatch) {
				break // removed meanwhile
			}
			if errors.Is(err, memory.ErrAmbiguous) {
				return fmt.Errorf("%w: note %s is in NOTES.md more than once (edited by hand): remove the copies there", session.ErrConflict, id)
			}
			return err
		}
		return nil
	}
	return fmt.Errorf("no memory note %q in workspace %s: GET /workspaces/%s/memory lists them: %w", id, ws.ID, ws.ID, session.ErrNotFound)
}

// workspaceKB opens the workspace's knowledge base through
// [Service.KnowledgeBase], the one place a server workspace's base is
// opened (its store: the shared database or the workspace's KBFile). When
// !create and the base was never written, it opens nothing and returns
// ErrNoKnowledgeBase: listing and searching create no file.
func (s *Service) workspaceKB(ctx context.Context, ws *session.Workspace, create bool) (*KnowledgeBase, error) {
	if !create && s.cfg.KnowledgeBases == nil {
		if _, err := os.Stat(filepath.Join(ws.Dir, filepath.FromSlash(KBFile))); errors.Is(err, fs.ErrNotExist) {
			return nil, ErrNoKnowledgeBase
		}
	}
	return s.KnowledgeBase(ctx, ws.Caller, ws.ID)
}

// KBDocuments lists the documents of the workspace's knowledge base, none
// when it has none.
func (s *Service) KBDocuments(ctx context.Context, ws *session.Workspace) ([]kb.Document, error) {
	if ws.Kind == session.WorkspaceChat {
		return nil, nil
	}
	k, err := s.workspaceKB(ctx, ws, false)
	if errors.Is(err, ErrNoKnowledgeBase) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer k.Close()
	return k.Documents(ctx)
}

// KBAdd indexes rel, a path relative to the workspace's directory, into
// its knowledge base. A path that does not exist, or leads out of the
// directory (.., a symbolic link), wraps session.ErrInvalid and nothing is
// indexed.
func (s *Service) KBAdd(ctx context.Context, ws *session.Workspace, rel string) (*kb.Report, error) {
	if ws.Kind == session.WorkspaceChat {
		return nil, fmt.Errorf("%w: a chat workspace has no knowledge base: open a project workspace", session.ErrInvalid)
	}
	if err := confinedPath(ws.Dir, rel); err != nil {
		return nil, err
	}
	k, err := s.workspaceKB(ctx, ws, true)
	if err != nil {
		return nil, err
	}
	defer k.Close()
	return k.Add(ctx, []string{filepath.FromSlash(rel)}, nil)
}

// confinedPath checks that rel names a file or a directory inside dir once
// every symbolic link is followed.
func confinedPath(dir, rel string) error {
	if filepath.IsAbs(rel) || !filepath.IsLocal(filepath.FromSlash(rel)) && rel != "." {
		return fmt.Errorf("%w: path %q is not inside the workspace: name a file or directory relative to it", session.ErrInvalid, rel)
	}
	real, err := filepath.EvalSymlinks(filepath.Join(dir, filepath.FromSlash(rel)))
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%w: path %q does not exist in the workspace", session.ErrInvalid, rel)
	}
	if err != nil {
		return fmt.Errorf("%w: path %q: %v", session.ErrInvalid, rel, err)
	}
	if r, err := filepath.Rel(dir, real); err != nil || r != "." && !filepath.IsLocal(r) {
		return fmt.Errorf("%w: path %q is a symbolic link leading out of the workspace: refused", session.ErrInvalid, rel)
	}
	fi, err := os.Stat(real)
	if err != nil {
		return fmt.Errorf("%w: path %q: %v", session.ErrInvalid, rel, err)
	}
	if !fi.IsDir() && !fi.Mode().IsRegular() {
		return fmt.Errorf("%w: path %q is not a regular file or a directory", session.ErrInvalid, rel)
	}
	return nil
}

// KBSearch searches the workspace's knowledge base as kb_search does: mode
// keyword keeps to the keyword pass, hybrid or "" fuses both when an
// embedding model is configured; limit is the hits at most. A workspace
// without a knowledge base has no hits.
func (s *Service) KBSearch(ctx context.Context, ws *session.Workspace, query, mode string, limit int) (*kb.Results, error) {
	if ws.Kind == session.WorkspaceChat {
		return &kb.Results{Mode: kb.ModeKeyword}, nil
	}
	k, err := s.workspaceKB(ctx, ws, false)
	if errors.Is(err, ErrNoKnowledgeBase) {
		return &kb.Results{Mode: kb.ModeKeyword}, nil
	}
	if err != nil {
		return nil, err
	}
	defer k.Close()
	res, err := k.Search(ctx, query, kb.SearchOptions{TopK: limit, KeywordOnly: mode == kb.ModeKeyword})
	if errors.Is(err, kb.ErrEmptyQuery) {
		return nil, fmt.Errorf("%w: %v", session.ErrInvalid, err)
	}
	return res, err
}
