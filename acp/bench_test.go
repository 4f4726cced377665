package acp_test

import (
	"context"
	"testing"

	"github.com/reinhq/rein/llm/llmtest"
)

// The latency the ACP front adds to a turn: one prompt of a one-reply
// turn through the protocol (JSON-RPC over pipes, updates streamed and
// decoded by the SDK's client) against the same turn run on a
// Conversation directly. Their difference is the front's cost.
func BenchmarkTurn(b *testing.B) {
	b.Run("acp", func(b *testing.B) {
		e := newEnv(b)
		conn, cl := e.connect()
		id := e.newSession(conn)
		b.ResetTimer()
		for b.Loop() {
			e.model.Push(llmtest.Reply{Text: "a reply of a few words, streamed"})
			prompt(b, conn, id, "hello")
			cl.take()
		}
	})
	b.Run("direct", func(b *testing.B) {
		e := newEnv(b)
		ws, err := e.open(context.Background(), e.work)
		if err != nil {
			b.Fatal(err)
		}
		defer ws.Close()
		s, err := ws.Setup.WithModel(ws.Setup.ModelSpec(nil))
		if err != nil {
			b.Fatal(err)
		}
		conv := s.NewConversation()
		defer conv.Close()
		b.ResetTimer()
		for b.Loop() {
			e.model.Push(llmtest.Reply{Text: "a reply of a few words, streamed"})
			for _, err := range conv.Submit(context.Background(), "", "hello", nil) {
				if err != nil {
					b.Fatal(err)
				}
			}
		}
	})
}
