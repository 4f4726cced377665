package feishu

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/reinhq/rein/gateway"
)

// The Open Platform's codes the client acts on.
const (
	codeRateLimited   = 99991400 // request trigger frequency limit
	codeTokenInvalid  = 99991663 // invalid tenant access token
	codeTokenMissing  = 99991661 // missing access token
	codeTokenMismatch = 99991668 // the token is of another kind or expired
)

// tokenMargin is how long before its expiry a tenant token is renewed;
// Feishu hands out a new one in the token's last half hour.
const tokenMargin = 5 * time.Minute

// maxResponse caps what the client reads of a JSON answer.
const maxResponse = 4 << 20

// apiResponse is the envelope of every Open Platform answer.
type apiResponse struct {
	Code int             `json:"code"`
	Msg  string          `json:"msg"`
	Data json.RawMessage `json:"data"`
}

// apiError is an answer with a code other than 0.
type apiError struct {
	Op   string
	Code int
	Msg  string
}

// Error implements error.
func (e *apiError) Error() string {
	return fmt.Sprintf("feishu: %s: code %d: %s", e.Op, e.Code, e.Msg)
}

// tenantToken returns a valid tenant access token, fetching one when the
// cached one is missing or near its expiry.
func (c *Channel) tenantToken(ctx context.Context) (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.token != "" && c.now().Before(c.tokenExp.Add(-tokenMargin)) {
		return c.token, nil
	}
	body, _ := json.Marshal(map[string]string{"app_id": c.appID, "app_secret": c.appSecret})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.apiURL+"/open-apis/auth/v3/tenant_access_token/internal", bytes.NewReader(body))
	if err != nil {
		return "", fmt.Errorf("feishu: tenant token: %w", err)
	}
	req.Header.Set("Content-Type", "application/json; charset=utf-8")
	resp, err := c.http.Do(req)
	if err != nil {
		return "", &gateway.RetryError{Err: fmt.Errorf("feishu: tenant token: %w", err)}
	}
	defer resp.Body.Close()
	if err := retryable("tenant token", resp); err != nil {
		return "", err
	}
	var tr struct {
		Code   int    `json:"code"`
		Msg    string `json:"msg"`
		Token  string `json:"tenant_access_token"`
		Expire int    `json:"expire"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxResponse)).Decode(&tr); err != nil {
		return "", fmt.Errorf("feishu: tenant token: HTTP %d, unreadable answer: %w", resp.StatusCode, err)
	}
	if tr.Code == codeRateLimited {
		return "", &gateway.RetryError{After: resetAfter(resp), Err: &apiError{"tenant token", tr.Code, tr.Msg}}
	}
	if tr.Code != 0 || tr.Token == "" {
		return "", fmt.Errorf("feishu: tenant token: code %d: %s: check app_id and the App Secret (the app must be a custom app of the tenant)", tr.Code, tr.Msg)
	}
	c.token = tr.Token
	c.tokenExp = c.now().Add(time.Duration(tr.Expire) * time.Second)
	return c.token, nil
}

// dropToken forgets the cached token if it still is tok.
func (c *Channel) dropToken(tok string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.token == tok {
		c.token = ""
	}
}

// call sends a JSON request with the tenant token and decodes the answer's
// data into out (when not nil).
func (c *Channel) call(ctx context.Context, op, method, path string, in, out any) error {
	body, err := marshal(in)
	if err != nil {
		return fmt.Errorf("feishu: %s: %w", op, err)
	}
	return c.do(ctx, op, method, path, "application/json; charset=utf-8", body, out)
}

// do sends a request with the tenant token and decodes the answer's data
// into out (when not nil). A refused token is renewed and the request
// made once more.
func (c *Channel) do(ctx context.Context, op, method, path, contentType string, body []byte, out any) error {
	for attempt := 0; ; attempt++ {
		tok, err := c.tenantToken(ctx)
		if err != nil {
			return err
		}
		resp, err := c.send(ctx, op, method, path, tok, contentType, body)
		if err != nil {
			return err
		}
		var ar apiResponse
		derr := json.NewDecoder(io.LimitReader(resp.Body, maxResponse)).Decode(&ar)
		resp.Body.Close()
		if derr != nil {
			return fmt.Errorf("feishu: %s: HTTP %d, unreadable answer: %w", op, resp.StatusCode, derr)
		}
		switch ar.Code {
		case 0:
			if out != nil && len(ar.Data) > 0 {
				if err := json.Unmarshal(ar.Data, out); err != nil {
					return fmt.Errorf("feishu: %s: unreadable data: %w", op, err)
				}
			}
			return nil
		case codeRateLimited:
			return &gateway.RetryError{After: resetAfter(resp), Err: &apiError{op, ar.Code, ar.Msg}}
		case codeTokenInvalid, codeTokenMissing, codeTokenMismatch:
			c.dropToken(tok)
			if attempt == 0 {
				continue
			}
		}
		return &apiError{op, ar.Code, ar.Msg}
	}
}

// send makes one request and returns the answer unless it asks to retry.
func (c *Channel) send(ctx context.Context, op, method, path, tok, contentType string, body []byte) (*http.Response, error) {
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.apiURL+path, r)
	if err != nil {
		return nil, fmt.Errorf("feishu: %s: %w", op, err)
	}
	req.Header.Set("Authorization", "Bearer "+tok)
	if body != nil {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("feishu: %s: %w", op, err)
		}
		return nil, &gateway.RetryError{Err: fmt.Errorf("feishu: %s: %w", op, err)}
	}
	if err := retryable(op, resp); err != nil {
		resp.Body.Close()
		return nil, err
	}
	return resp, nil
}

// retryable turns a 429 or 5xx answer into a [gateway.RetryError].
func retryable(op string, resp *http.Response) error {
	switch {
	case resp.StatusCode == http.StatusTooManyRequests:
		return &gateway.RetryError{After: resetAfter(resp), Err: fmt.Errorf("feishu: %s: HTTP 429 (frequency limit)", op)}
	case resp.StatusCode >= 500:
		return &gateway.RetryError{Err: fmt.Errorf("feishu: %s: HTTP %d", op, resp.StatusCode)}
	}
	return nil
}

// resetAfter reads x-ogw-ratelimit-reset: the seconds until the limit
// resets (zero when absent: the gateway backs off).
func resetAfter(resp *http.Response) time.Duration {
	s, err := strconv.Atoi(resp.Header.Get("x-ogw-ratelimit-reset"))
	if err != nil || s <= 0 {
		return 0
	}
	return time.Duration(min(s, 3600)) * time.Second
}

// marshal encodes v as JSON without HTML escaping (nil for nil).
func marshal(v any) ([]byte, error) {
	if v == nil {
		return nil, nil
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

var errEmpty = errors.New("feishu: the message has neither text nor buttons")
