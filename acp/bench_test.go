package acp_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reinhq/rein/llm"
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

// The cost of reading through the editor (fs/read_text_file, FRONT-1): a
// turn whose model reads a file then answers, over the protocol, with the
// file read from disk ("disk") and from the client's buffer ("editor").
//
//	go test ./acp/ -run '^$' -bench BenchmarkReadTurn -benchtime 200x -count 3
func BenchmarkReadTurn(b *testing.B) {
	for _, editor := range []bool{false, true} {
		name := "disk"
		if editor {
			name = "editor"
		}
		b.Run(name, func(b *testing.B) {
			e := newEnv(b)
			notes := filepath.Join(e.work, "notes.txt")
			os.WriteFile(notes, []byte(strings.Repeat("a line of notes\n", 20)), 0o600)
			conn, cl := e.connect()
			if editor {
				conn, cl = e.connectFS(map[string]string{notes: strings.Repeat("a line not saved\n", 20)})
			}
			id := e.newSession(conn)
			b.ResetTimer()
			n := 0
			for b.Loop() {
				if n++; n%100 == 0 { // a fresh session before the context fills and compaction calls the model
					b.StopTimer()
					id = e.newSession(conn)
					b.StartTimer()
				}
				e.model.Push(llmtest.Reply{ToolCalls: []llm.ToolUse{llmtest.Call("r", "read_file", `{"path":"notes.txt"}`)}},
					llmtest.Reply{Text: "read"})
				prompt(b, conn, id, "read the notes")
				cl.take()
				cl.calls()
			}
		})
	}
}
