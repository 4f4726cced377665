package cli

import (
	"bytes"
	"context"
	"io"
	"strings"
	"sync"
	"testing"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/llm/llmtest"
)

// acpClient is an ACP client for the command's test: it keeps the text
// streamed and answers permission questions once. It offers no file
// system or terminal, so the embedded nil Client is never called.
type acpClient struct {
	sdk.Client
	mu   sync.Mutex
	text strings.Builder
}

func (c *acpClient) SessionUpdate(_ context.Context, n sdk.SessionNotification) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if m := n.Update.AgentMessageChunk; m != nil && m.Content.Text != nil {
		c.text.WriteString(m.Content.Text.Text)
	}
	return nil
}

func (c *acpClient) RequestPermission(context.Context, sdk.RequestPermissionRequest) (sdk.RequestPermissionResponse, error) {
	return sdk.RequestPermissionResponse{Outcome: sdk.NewRequestPermissionOutcomeSelected("once")}, nil
}

// rein acp serves ACP on stdio in the workspace the client names, with
// the CLI's model, store and configuration; the session is stored for
// rein --resume (SPEC FRONT-1).
func TestACPCommand_FRONT1(t *testing.T) {
	te := newTestEnv(t)
	te.script("demo", llmtest.Reply{ToolCalls: []llm.ToolUse{llmtest.Call("c1", "read_file", `{"path":"notes.txt"}`)}},
		llmtest.Reply{Text: "Friday."})
	te.write("notes.txt", "ship on Friday\n")
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	var stderr bytes.Buffer
	a := te.app(&bytes.Buffer{}, &stderr)
	a.Stdin, a.Stdout = inR, outW
	code := make(chan int, 1)
	go func() {
		code <- a.Run(context.Background(), []string{"acp", "--model", "scripted/demo"})
		outW.Close()
	}()
	cl := &acpClient{}
	conn := sdk.NewClientSideConnection(cl, inW, outR)
	ctx := context.Background()
	if _, err := conn.Initialize(ctx, sdk.InitializeRequest{ProtocolVersion: sdk.ProtocolVersionNumber}); err != nil {
		t.Fatal(err)
	}
	s, err := conn.NewSession(ctx, sdk.NewSessionRequest{Cwd: te.ws, McpServers: []sdk.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	r, err := conn.Prompt(ctx, sdk.PromptRequest{SessionId: s.SessionId, Prompt: []sdk.ContentBlock{sdk.TextBlock("when do we ship?")}})
	if err != nil {
		t.Fatal(err)
	}
	inW.Close()
	if c := <-code; c != 0 {
		t.Fatalf("exit %d: %s", c, stderr.String())
	}
	if r.StopReason != sdk.StopReasonEndTurn || cl.text.String() != "Friday." {
		t.Errorf("stop %s, text %q", r.StopReason, cl.text.String())
	}
	out, _ := te.mustRun(0, "sessions", "list")
	if !strings.Contains(out, string(s.SessionId)) {
		t.Errorf("the session is not stored:\n%s", out)
	}
}
