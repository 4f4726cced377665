package jsonl_test

import (
	"context"
	"fmt"
	"os"

	"github.com/reinhq/rein/agent"
	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/llm/llmtest"
	"github.com/reinhq/rein/session"
	"github.com/reinhq/rein/session/jsonl"
)

// ExampleNew keeps a session in JSONL files, the CLI's store (SPEC
// SESS-1): a run's messages are appended as they happen, the process "dies"
// after the model asked for a tool whose result was never written, and a
// new store over the same directory finds the session again (SESS-3), loads
// it healed (SESS-2: the cut-off call gets a result saying so), stores the
// repair and resumes the conversation.
func ExampleNew() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "rein-sessions-")
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	defer os.RemoveAll(dir)

	store, err := jsonl.New(dir)
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	s := &session.Session{WorkDir: "/home/ada/project"}
	if err := store.Create(ctx, s); err != nil {
		fmt.Println("error:", err)
		return
	}
	// The first run is cut off once the model's request for a tool is
	// stored: its result never is.
	user := llm.UserText("Delete the build directory.")
	asked := llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{
		&llm.Text{Text: "Deleting it."},
		&llm.ToolUse{ID: "call-1", Name: "bash", Input: llm.ToolInput(`{"command":"rm -rf build"}`)},
	}}
	last, err := store.Append(ctx, s.ID,
		session.Entry{Kind: session.KindMessage, Message: &user},
		session.Entry{Kind: session.KindMessage, Message: &asked})
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	fmt.Println("stored up to seq", last)
	if err := store.Close(); err != nil { // the process ends; its lock goes with it
		fmt.Println("error:", err)
		return
	}

	// A new process opens the same directory and continues the newest
	// session of the workspace (rein --continue).
	store, err = jsonl.New(dir)
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	defer store.Close()
	latest, err := session.ContinueLatest(ctx, store, "/home/ada/project")
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	st, err := session.Load(ctx, store, latest.ID)
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	fmt.Println("same session:", latest.ID == s.ID)
	fmt.Println("healed:", st.Heal.String())
	if err := session.SaveHeal(ctx, store, s.ID, st); err != nil {
		fmt.Println("error:", err)
		return
	}

	// Resume: the model sees the healed history and is told the call was
	// interrupted.
	model := llmtest.NewScripted(llmtest.Reply{Text: "The deletion was interrupted; I will check build/ before retrying."})
	a := agent.New(agent.Config{Provider: model, Model: "test-model"})
	prompt := llm.UserText("Did it work?")
	for ev, err := range a.Run(ctx, agent.Input{SessionID: s.ID, History: st.Messages, Prompt: &prompt}) {
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
	sent := model.Requests()[0].Messages
	fmt.Println("the model got", len(sent), "messages; the tool result is an error:", sent[2].ToolResults()[0].IsError)

	st, err = session.Load(ctx, store, s.ID)
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	fmt.Printf("reloaded: %d messages, nothing left to heal: %v\n", len(st.Messages), st.Heal.Empty())
	// Output:
	// stored up to seq 2
	// same session: true
	// healed: 1 interrupted call(s) (call-1)
	// answer: The deletion was interrupted; I will check build/ before retrying.
	// the model got 4 messages; the tool result is an error: true
	// reloaded: 5 messages, nothing left to heal: true
}
