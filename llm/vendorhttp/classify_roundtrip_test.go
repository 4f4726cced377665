package vendorhttp

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"syscall"
	"testing"

	"github.com/reinhq/rein/llm"
)

// FromRoundTrip classifies what the round trip reported, not the
// *url.Error around it, which always passes for a network error.
func TestFromRoundTrip(t *testing.T) {
	wrap := func(err error) error { return &url.Error{Op: "Post", URL: "http://127.0.0.1:9/v1", Err: err} }
	for _, c := range []struct {
		name string
		err  error
		want llm.ErrorKind
	}{
		{"refused", wrap(syscall.ECONNREFUSED), llm.KindNetwork},
		{"bad scheme", wrap(errors.New(`unsupported protocol scheme "htp"`)), llm.KindUnknown},
		{"cut", wrap(io.ErrUnexpectedEOF), llm.KindStreamCut},
		{"not wrapped", syscall.ECONNRESET, llm.KindNetwork},
	} {
		e := FromRoundTrip(context.Background(), "p", c.err)
		if e.Kind != c.want || e.Provider != "p" {
			t.Errorf("%s: kind %v provider %q; want %v", c.name, e.Kind, e.Provider, c.want)
		}
		if _, ok := errors.AsType[*url.Error](e.Err); ok {
			t.Errorf("%s: Err still holds the *url.Error: %v", c.name, e.Err)
		}
	}
}

// closeRecorder is a body that records whether it was closed.
type closeRecorder struct {
	io.Reader
	closed bool
}

func (c *closeRecorder) Close() error { c.closed = true; return nil }

// FromResponse reads at most MaxErrorBody, closes the body and keeps the
// status and headers.
func TestFromResponse(t *testing.T) {
	msg := `{"error":{"message":"slow down"}}`
	body := &closeRecorder{Reader: io.MultiReader(strings.NewReader(msg), strings.NewReader(strings.Repeat(" ", 2*MaxErrorBody)))}
	resp := &http.Response{StatusCode: http.StatusTooManyRequests, Header: http.Header{"Retry-After": {"3"}}, Body: body}
	e := FromResponse("p", resp)
	if e.Kind != llm.KindRateLimit || e.Status != 429 || e.Message != "slow down" || e.RetryAfter.Seconds() != 3 {
		t.Errorf("got %+v", e)
	}
	if !body.closed {
		t.Error("the body was not closed")
	}
	if rest, _ := io.Copy(io.Discard, body); rest != int64(len(msg)+2*MaxErrorBody-MaxErrorBody) {
		t.Errorf("%d bytes left unread; want all but MaxErrorBody", rest)
	}
}
