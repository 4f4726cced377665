package mcpserver_test

import (
	"context"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/reinhq/rein/agent"
	"github.com/reinhq/rein/llm/llmtest"
	"github.com/reinhq/rein/mcpserver"
)

// BenchmarkTurn measures what the MCP front adds to a one-turn run with a
// scripted model (FRONT-2): "direct" opens the workspace's Setup and a
// Conversation and submits the prompt, as the front does for each call;
// "mcp" makes the same run as a tools/call of run from a go-sdk client over
// an in-memory transport. The difference is the front's cost per turn.
//
//	go test -run '^$' -bench BenchmarkTurn -benchmem ./mcpserver/
func BenchmarkTurn(b *testing.B) {
	f := newFixture(b, nil)
	f.model.Repeat = &llmtest.Reply{Text: "done"}
	f.model.NoRecord = true
	ctx := context.Background()
	b.Run("direct", func(b *testing.B) {
		for b.Loop() {
			base, err := f.open(ctx, f.root, mcpserver.Options{})
			if err != nil {
				b.Fatal(err)
			}
			setup, err := base.WithModel(base.ModelSpec(nil))
			if err != nil {
				b.Fatal(err)
			}
			conv := setup.NewConversation()
			var reason agent.Reason
			for ev := range conv.Submit(ctx, "", "hello", nil) {
				if ev.Type == agent.EventDone {
					reason = ev.Done.Reason
				}
			}
			conv.Close()
			base.Close()
			if reason != agent.ReasonCompleted {
				b.Fatalf("run ended %s", reason)
			}
		}
	})
	b.Run("mcp", func(b *testing.B) {
		cs := f.connect(b, nil)
		for b.Loop() {
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "run", Arguments: map[string]any{"prompt": "hello"}})
			if err != nil || res.IsError {
				b.Fatalf("run: %v %v", err, res)
			}
		}
	})
}
