// Package httphook is the transport of HTTP hooks (SPEC HOOK-3): a
// [hook.Poster] over net/http. It lives outside package hook so that the
// core — the run loop, the hooks, the permission policy — links no HTTP
// client; the configuration (package workspace) hands it to the hooks it
// builds.
package httphook

import (
	"bytes"
	"context"
	"io"
	"net/http"

	"github.com/reinhq/rein/hook"
)

// Client is a [hook.Poster] over an *http.Client.
type Client struct {
	// HTTP sends the requests; nil means http.DefaultClient (the hook's
	// timeout, from its context, bounds each call).
	HTTP *http.Client
}

var _ hook.Poster = Client{}

// Post implements hook.Poster: one POST of body with header, the reply's
// status and at most limit bytes of its body.
func (c Client) Post(ctx context.Context, url string, header map[string]string, body []byte, limit int64) (int, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	client := c.HTTP
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	reply, err := io.ReadAll(io.LimitReader(resp.Body, limit))
	if err != nil {
		return 0, nil, err
	}
	return resp.StatusCode, reply, nil
}
