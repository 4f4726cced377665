package server

import (
	"bytes"
	"context"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/reinhq/rein/session"
)

// The media types of the export formats.
const (
	typeJSONL    = "application/x-ndjson"
	typeMarkdown = "text/markdown; charset=utf-8"
)

type exportInput struct {
	ID     string `path:"id" maxLength:"128" pattern:"^[A-Za-z0-9_-][A-Za-z0-9._-]*$" doc:"Session id."`
	Format string `query:"format" enum:"jsonl,markdown" default:"jsonl" doc:"jsonl: the log's entries, one JSON object a line; markdown: the conversation, readable."`
}

func (s *Server) registerExport() {
	op := s.operation(http.MethodGet, "/sessions/{id}/export", "export-session", "Export a session", http.StatusOK, http.StatusNotFound)
	op.Tags = []string{"sessions"}
	op.Description = "jsonl writes the log's entries in the stores' encoding (SPEC SESS-3); markdown the healed conversation, " +
		"tool results cut to 20 lines."
	op.Responses = map[string]*huma.Response{"200": {Description: "The export.", Content: map[string]*huma.MediaType{
		typeJSONL:       {Schema: &huma.Schema{Type: huma.TypeString}},
		"text/markdown": {Schema: &huma.Schema{Type: huma.TypeString}},
	}}}
	huma.Register(s.api, op, s.exportSession)
}

func (s *Server) exportSession(ctx context.Context, in *exportInput) (*rawOutput, error) {
	c, err := caller(ctx)
	if err != nil {
		return nil, err
	}
	if _, err := s.ownSession(ctx, c, in.ID); err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	out := &rawOutput{ContentType: typeJSONL}
	if in.Format == "markdown" {
		out.ContentType = typeMarkdown
		st, lerr := session.Load(ctx, s.cfg.Sessions, in.ID)
		if lerr == nil {
			lerr = session.ExportMarkdown(&buf, st)
		}
		err = lerr
	} else {
		err = session.ExportJSONL(&buf, s.cfg.Sessions.Entries(ctx, in.ID, 0))
	}
	if err != nil {
		return nil, s.fail(ctx, "exporting the session", err)
	}
	out.Body = buf.Bytes()
	return out, nil
}
