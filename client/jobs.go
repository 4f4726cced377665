package client

import (
	"context"
	"net/http"

	"github.com/reinhq/rein/api"
)

// Jobs lists the background jobs of a session's current run, oldest
// first (SPEC TOOL-8): GET /sessions/{id}/jobs.
func (c *Client) Jobs(ctx context.Context, sessionID string) ([]api.Job, error) {
	p, err := seg("session", sessionID)
	if err != nil {
		return nil, err
	}
	out, err := call[api.JobList](ctx, c, http.MethodGet, "/sessions/"+p+"/jobs", nil, nil)
	if err != nil {
		return nil, err
	}
	return out.Items, nil
}
