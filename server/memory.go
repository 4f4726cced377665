package server

import (
	"context"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/reinhq/rein/api"
)

type memoryListOutput struct {
	Body api.MemoryNoteList
}

type memoryNoteOutput struct {
	Body api.MemoryNote
}

type addMemoryInput struct {
	ID   string `path:"id" maxLength:"128" pattern:"^[A-Za-z0-9_-][A-Za-z0-9._-]*$" doc:"Workspace id."`
	Body api.AddMemoryNote
}

type memoryNoteInput struct {
	ID     string `path:"id" maxLength:"128" pattern:"^[A-Za-z0-9_-][A-Za-z0-9._-]*$" doc:"Workspace id."`
	NoteID string `path:"note_id" maxLength:"64" pattern:"^[a-f0-9]+$" doc:"The note's id (GET /workspaces/{id}/memory)."`
}

// registerMemory registers the workspace memory operations (SPEC MEM-1,
// MEM-3 over the API).
func (s *Server) registerMemory() {
	if s.cfg.Workspaces == nil {
		return
	}
	op := s.operation(http.MethodGet, "/workspaces/{id}/memory", "list-memory", "List the workspace's memory notes", http.StatusOK, http.StatusNotFound)
	op.Tags = []string{"memory"}
	op.Description = "The notes of the workspace's memory (.rein/memory/NOTES.md), which every run's system prompt shows, each " +
		"with the memory scanner's verdict: a note a person wrote by hand that the scanner flags is kept but withheld from the prompt. " +
		"A chat workspace, or one whose settings turn memory off, has none."
	huma.Register(s.api, op, s.listMemory)

	op = s.operation(http.MethodPost, "/workspaces/{id}/memory", "add-memory", "Add a memory note", http.StatusCreated, http.StatusNotFound)
	op.Tags = []string{"memory"}
	op.Description = "The note goes through the scanner the memory tool uses (SPEC MEM-3): an instruction to the model, a secret, " +
		"hidden or invisible text is refused with 422, the detail saying what the scanner found; nothing is written then. A note " +
		"equal to one kept already adds nothing and answers that one. The notes' cap is the memory tool's: over it is 422."
	huma.Register(s.api, op, s.addMemory)

	op = s.operation(http.MethodDelete, "/workspaces/{id}/memory/{note_id}", "delete-memory", "Remove a memory note", http.StatusNoContent, http.StatusNotFound)
	op.Tags = []string{"memory"}
	huma.Register(s.api, op, s.deleteMemory)
}

func (s *Server) listMemory(ctx context.Context, in *workspaceIDInput) (*memoryListOutput, error) {
	w, err := s.callerWorkspace(ctx, in.ID)
	if err != nil {
		return nil, err
	}
	notes, err := s.cfg.Workspaces.MemoryNotes(ctx, w)
	if err != nil {
		return nil, s.fail(ctx, "reading the workspace's memory", err)
	}
	if notes == nil {
		notes = []api.MemoryNote{}
	}
	return &memoryListOutput{Body: api.MemoryNoteList{Notes: notes}}, nil
}

func (s *Server) addMemory(ctx context.Context, in *addMemoryInput) (*memoryNoteOutput, error) {
	w, err := s.callerWorkspace(ctx, in.ID)
	if err != nil {
		return nil, err
	}
	n, err := s.cfg.Workspaces.AddMemoryNote(ctx, w, in.Body.Text, in.Body.Scope)
	if err != nil {
		return nil, s.fail(ctx, "adding the memory note", err)
	}
	return &memoryNoteOutput{Body: n}, nil
}

func (s *Server) deleteMemory(ctx context.Context, in *memoryNoteInput) (*struct{}, error) {
	w, err := s.callerWorkspace(ctx, in.ID)
	if err != nil {
		return nil, err
	}
	if err := s.cfg.Workspaces.DeleteMemoryNote(ctx, w, in.NoteID); err != nil {
		return nil, s.fail(ctx, "removing the memory note", err)
	}
	return nil, nil
}
