package acp_test

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/reinhq/rein/acp"
	"github.com/reinhq/rein/llm/llmtest"
)

// What a client sends is checked before rein acts on it: a session id
// that is a path, a session of another workspace, a cwd that is not
// absolute, a prompt too large or of a kind not offered, a link to a file
// outside the workspace (never read by the front).
func TestAttackRows_FRONT1(t *testing.T) {
	e := newEnv(t, llmtest.Reply{Text: "ok"})
	secret := filepath.Join(filepath.Dir(e.work), "secret.txt")
	os.WriteFile(secret, []byte("TOP-SECRET-VALUE"), 0o600)
	other := filepath.Join(filepath.Dir(e.work), "other")
	os.MkdirAll(other, 0o700)
	conn, _ := e.connect()
	id := e.newSession(conn)
	ctx := context.Background()
	conn2, _ := e.connect() // where the session is not open
	load := func(id sdk.SessionId, cwd string) error {
		_, err := conn2.LoadSession(ctx, sdk.LoadSessionRequest{SessionId: id, Cwd: cwd, McpServers: []sdk.McpServer{}})
		return err
	}
	promptErr := func(blocks ...sdk.ContentBlock) error {
		_, err := conn.Prompt(ctx, sdk.PromptRequest{SessionId: id, Prompt: blocks})
		return err
	}
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"load id with traversal", load("../../../etc/passwd", e.work), "sessionId"},
		{"load id with a slash", load("a/b", e.work), "sessionId"},
		{"load a session of another workspace", load(id, other), "belongs to"},
		{"load with a relative cwd", load(id, "project"), "absolute path"},
		{"new session with a relative cwd", func() error {
			_, err := conn.NewSession(ctx, sdk.NewSessionRequest{Cwd: "../x", McpServers: []sdk.McpServer{}})
			return err
		}(), "absolute path"},
		{"new session with additional directories", func() error {
			_, err := conn.NewSession(ctx, sdk.NewSessionRequest{Cwd: e.work, AdditionalDirectories: []string{"/"}, McpServers: []sdk.McpServer{}})
			return err
		}(), "additionalDirectories"},
		{"prompt to a session not open", func() error {
			_, err := conn.Prompt(ctx, sdk.PromptRequest{SessionId: "nope", Prompt: []sdk.ContentBlock{sdk.TextBlock("hi")}})
			return err
		}(), "no open session"},
		{"huge prompt", promptErr(sdk.TextBlock(strings.Repeat("x", 3<<20))), "link large files"},
		{"audio not offered", promptErr(sdk.AudioBlock("AAAA", "audio/wav")), "audio"},
		{"image that is not one", promptErr(sdk.ImageBlock("bm90IGFuIGltYWdl", "image/png")), "block 1"},
		{"binary resource", promptErr(sdk.ResourceBlock(sdk.EmbeddedResourceResource{BlobResourceContents: &sdk.BlobResourceContents{Uri: "file:///bin/sh", Blob: "AAAA"}})), "binary resource"},
		{"empty prompt", promptErr(sdk.TextBlock("")), "empty"},
	} {
		if tc.err == nil || !strings.Contains(tc.err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want one saying %q", tc.name, tc.err, tc.want)
		}
	}

	// A link to a file outside the workspace reaches the model as a link;
	// the front reads nothing.
	if err := promptErr(sdk.TextBlock("see "), sdk.ResourceLinkBlock("secret.txt", "file://"+secret)); err != nil {
		t.Fatal(err)
	}
	reqs := e.model.Requests()
	if len(reqs) != 1 {
		t.Fatalf("requests = %d", len(reqs))
	}
	sent := reqs[0].Messages[len(reqs[0].Messages)-1].TextOf()
	if !strings.Contains(sent, "file://"+secret) || strings.Contains(sent, "TOP-SECRET") {
		t.Errorf("the model got %q", sent)
	}
}

// A malformed JSON-RPC line is skipped and the connection goes on; a line
// past the transport's 10 MiB bound ends the connection, and Serve
// returns, rather than growing without bound.
func TestMalformedLines_FRONT1(t *testing.T) {
	e := newEnv(t)
	in := strings.NewReader("{not json\n" + `{"jsonrpc":"2.0","id":7,"method":"initialize","params":{"protocolVersion":1}}` + "\n")
	var out bytes.Buffer
	if err := acp.Serve(context.Background(), acp.Config{Open: e.open}, in, &out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), `"id":7,"result"`) {
		t.Errorf("after a bad line: %q", out.String())
	}

	huge := io.MultiReader(strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"x":"`),
		io.LimitReader(repeat('a'), 11<<20), strings.NewReader("\"}}\n"+`{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":1}}`+"\n"))
	out.Reset()
	if err := acp.Serve(context.Background(), acp.Config{Open: e.open}, bufio.NewReader(huge), &out); err != nil {
		t.Fatal(err)
	}
	// The connection ended at the long line: the request after it was
	// not answered.
	if out.Len() != 0 {
		t.Errorf("huge line: out %q", out.String())
	}
}

// repeat is an endless reader of b.
type repeat byte

func (r repeat) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(r)
	}
	return len(p), nil
}
