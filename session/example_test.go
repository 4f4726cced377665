package session_test

import (
	"context"
	"fmt"

	"github.com/reinhq/rein/agent"
	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/llm/llmtest"
	"github.com/reinhq/rein/session"
)

// ExampleNewMemStore keeps a conversation in the in-memory store: create a
// session, append the messages of a run as its message events arrive, load
// the session back (SPEC SESS-1) and resume it with a second run that sees
// the first exchange. session/jsonl and session/sqlite are used the same
// way: every store implements session.Store.
func ExampleNewMemStore() {
	ctx := context.Background()
	store := session.NewMemStore()
	s := &session.Session{WorkDir: "/home/ada/project", Title: "umbrella"}
	if err := store.Create(ctx, s); err != nil {
		fmt.Println("error:", err)
		return
	}

	model := llmtest.NewScripted(
		llmtest.Reply{Text: "Yes: rain is forecast in Oslo."},
		llmtest.Reply{Text: "You asked about Oslo."},
	)
	a := agent.New(agent.Config{Provider: model, Model: "test-model"})

	// run sends one prompt after history and appends every message the
	// run adds to the conversation, as it happens.
	run := func(text string, history []llm.Message) {
		prompt := llm.UserText(text)
		for ev, err := range a.Run(ctx, agent.Input{SessionID: s.ID, History: history, Prompt: &prompt}) {
			if err != nil {
				fmt.Println("error:", err)
				return
			}
			switch ev.Type {
			case agent.EventMessage:
				if _, err := store.Append(ctx, s.ID, session.Entry{Kind: session.KindMessage, RunID: ev.RunID, Message: ev.Message}); err != nil {
					fmt.Println("error:", err)
					return
				}
			case agent.EventDone:
				fmt.Println("answer:", ev.Done.Text)
			}
		}
	}
	run("Do I need an umbrella in Oslo?", nil)

	// Later, perhaps in another process for a durable store: load and
	// resume.
	st, err := session.Load(ctx, store, s.ID)
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	fmt.Printf("loaded %q: %d messages, last seq %d\n", st.Session.Title, len(st.Messages), st.LastSeq)
	run("Which city did I ask about?", st.Messages)
	fmt.Println("the second request held", len(model.Requests()[1].Messages), "messages")

	for e, err := range store.Entries(ctx, s.ID, 0) {
		if err != nil {
			fmt.Println("error:", err)
			return
		}
		fmt.Println(e.Seq, e.Kind, e.Message.Role, e.Message.TextOf())
	}
	// Output:
	// answer: Yes: rain is forecast in Oslo.
	// loaded "umbrella": 2 messages, last seq 2
	// answer: You asked about Oslo.
	// the second request held 3 messages
	// 1 message user Do I need an umbrella in Oslo?
	// 2 message assistant Yes: rain is forecast in Oslo.
	// 3 message user Which city did I ask about?
	// 4 message assistant You asked about Oslo.
}
