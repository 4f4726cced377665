package sdkcheck_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// captured is one request the capture server received.
type captured struct {
	Method, Path, Query string
	Header              http.Header
	Body                []byte
}

// captureServer answers every request on 127.0.0.1 with a fixed reply and
// keeps what it received, so a body built by rein's adapter and one built
// by the SDK can be compared.
type captureServer struct {
	URL  string
	mu   sync.Mutex
	reqs []captured
}

// newCaptureServer starts a server that answers with body as contentType.
func newCaptureServer(t *testing.T, contentType, body string) *captureServer {
	t.Helper()
	c := &captureServer{}
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		c.mu.Lock()
		c.reqs = append(c.reqs, captured{Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery, Header: r.Header.Clone(), Body: b})
		c.mu.Unlock()
		w.Header().Set("Content-Type", contentType)
		_, _ = io.WriteString(w, body)
	}))
	t.Cleanup(ts.Close)
	c.URL = ts.URL
	return c
}

// take returns the only request received since the last take, and forgets it.
func (c *captureServer) take(t *testing.T, who string) captured {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.reqs) != 1 {
		t.Fatalf("%s sent %d requests, want 1", who, len(c.reqs))
	}
	r := c.reqs[0]
	c.reqs = nil
	return r
}

// allowance is one intended difference between rein's body and the SDK's:
// apply rewrites the decoded bodies so the difference goes, and reports
// whether there was anything to rewrite. An allowance that finds nothing to
// rewrite fails the test: it is stale and must be removed, so none hides a
// difference it was not written for.
type allowance struct {
	// api and row name the request the allowance is for (row as the
	// subtest names it, provider prefix included).
	api, row string
	name     string
	// ref says why: intended, or the bug it stands for (REPORT names the
	// report of the session that found it).
	ref   string
	apply func(rein, sdk map[string]any) bool
}

// bodyAllowances lists every intended or known difference between rein's
// request bodies and the SDKs'. Anything else fails the body tests.
var bodyAllowances = []allowance{}

func init() {
	// genai sends "generationConfig":{} when nothing in it is set; rein
	// leaves the field out. The API reads both the same: no settings.
	for _, row := range []string{"multi-turn with tool calls and results", "images in a turn and in a tool result",
		"empty text and empty tool input", "server tool blocks replayed"} {
		bodyAllowances = append(bodyAllowances, allowance{api: "gemini", row: row,
			name: "the SDK sends an empty generationConfig, rein none", ref: "intended: equivalent",
			apply: func(rein, sdk map[string]any) bool {
				gc, ok := sdk["generationConfig"].(map[string]any)
				if _, inRein := rein["generationConfig"]; !ok || len(gc) != 0 || inRein {
					return false
				}
				delete(sdk, "generationConfig")
				return true
			}})
	}
}

// decodeJSON decodes a body with numbers kept as written.
func decodeJSON(t *testing.T, who string, b []byte) map[string]any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		t.Fatalf("%s body is not a JSON object: %v\n%s", who, err, b)
	}
	return m
}

// compareBodies compares two JSON bodies semantically (key order and
// whitespace aside), after the allowances listed for api and the running
// subtest's row.
func compareBodies(t *testing.T, api string, rein, sdk []byte) {
	t.Helper()
	r, s := decodeJSON(t, "rein's", rein), decodeJSON(t, "the SDK's", sdk)
	for _, a := range bodyAllowances {
		if a.api != api || !strings.HasSuffix(t.Name(), "/"+strings.ReplaceAll(a.row, " ", "_")) {
			continue
		}
		t.Logf("allowed difference %q (%s)", a.name, a.ref)
		if !a.apply(r, s) {
			t.Errorf("allowance %q matched nothing: remove it", a.name)
		}
	}
	if diff := cmp.Diff(s, r); diff != "" {
		t.Errorf("request body differs from the SDK's (-sdk +rein):\n%s\nrein: %s\nsdk:  %s", diff, rein, sdk)
	}
}

// canonicalJSON re-encodes a JSON value with sorted keys, or returns it
// quoted as invalid when it does not parse, so arguments compare by meaning.
func canonicalJSON(raw []byte) string {
	if len(bytes.TrimSpace(raw)) == 0 {
		return ""
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil || dec.More() {
		return fmt.Sprintf("invalid JSON %q", raw)
	}
	out, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("invalid JSON %q", raw)
	}
	return string(out)
}
