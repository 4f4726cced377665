package sqlite_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/reinhq/rein/agent"
	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/llm/llmtest"
	"github.com/reinhq/rein/session"
	"github.com/reinhq/rein/session/sqlite"
)

// ExampleOpen keeps sessions in one SQLite file, the store of `rein serve`
// (SPEC SESS-1, API-5): a run's messages are appended as they happen, the
// database is closed and opened again, the session is loaded and resumed,
// and then forked after its first exchange.
func ExampleOpen() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "rein-db-")
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "rein.db")

	model := llmtest.NewScripted(
		llmtest.Reply{Text: "Paris."},
		llmtest.Reply{Text: "About 2.1 million people."},
	)
	a := agent.New(agent.Config{Provider: model, Model: "test-model"})
	// run sends one prompt after history and appends every message the
	// run adds to session id of store.
	run := func(store session.Store, id, text string, history []llm.Message) {
		prompt := llm.UserText(text)
		for ev, err := range a.Run(ctx, agent.Input{SessionID: id, History: history, Prompt: &prompt}) {
			if err != nil {
				fmt.Println("error:", err)
				return
			}
			switch ev.Type {
			case agent.EventMessage:
				if _, err := store.Append(ctx, id, session.Entry{Kind: session.KindMessage, RunID: ev.RunID, Message: ev.Message}); err != nil {
					fmt.Println("error:", err)
					return
				}
			case agent.EventDone:
				fmt.Println("answer:", ev.Done.Text)
			}
		}
	}

	db, err := sqlite.Open(path, sqlite.Options{})
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	s := &session.Session{WorkDir: "/srv/chat", Title: "capitals"}
	if err := db.Create(ctx, s); err != nil {
		fmt.Println("error:", err)
		return
	}
	run(db, s.ID, "What is the capital of France?", nil)
	if err := db.Close(); err != nil {
		fmt.Println("error:", err)
		return
	}

	// Open the file again: everything written is there.
	db, err = sqlite.Open(path, sqlite.Options{})
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	defer db.Close()
	st, err := session.Load(ctx, db, s.ID)
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	fmt.Printf("loaded %q: %d messages\n", st.Session.Title, len(st.Messages))
	run(db, s.ID, "How many people live there?", st.Messages)

	// A fork after the first exchange starts a new conversation from it.
	fork, err := db.Fork(ctx, s.ID, 2)
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	fst, err := session.Load(ctx, db, fork.ID)
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	fmt.Printf("fork of the original: %v, %d messages, ends with %q\n",
		fork.ParentID == s.ID, len(fst.Messages), fst.Messages[len(fst.Messages)-1].TextOf())

	list, _, err := db.List(ctx, session.ListOptions{WorkDir: "/srv/chat"})
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	fmt.Println("sessions of /srv/chat:", len(list))
	// Output:
	// answer: Paris.
	// loaded "capitals": 2 messages
	// answer: About 2.1 million people.
	// fork of the original: true, 2 messages, ends with "Paris."
	// sessions of /srv/chat: 2
}
