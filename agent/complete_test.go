package agent

import (
	"context"
	"fmt"
	"testing"

	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/llm/llmtest"
)

// LOOP-1: Complete drains the stream of Run and returns its done result,
// the same one a streaming caller sees.
func TestComplete_LOOP1(t *testing.T) {
	script := func() *llmtest.Scripted {
		return llmtest.NewScripted(
			llmtest.Reply{ToolCalls: []llm.ToolUse{call("c1", "read", sleepIn{ID: "a"})}},
			llmtest.Reply{Text: "all done"},
		)
	}
	streamed := drive(t, ctxb, newAgent(script(), testTools(t, &probe{})), Input{Prompt: prompt("go")})
	done, err := newAgent(script(), testTools(t, &probe{})).Complete(ctxb, Input{Prompt: prompt("go")})
	if err != nil {
		t.Fatal(err)
	}
	if done.Reason != ReasonCompleted || done.Text != "all done" || done.Turns != streamed.done.Turns || done.Stats.ToolCalls != 1 {
		t.Errorf("Complete = %+v, streamed %+v", done, streamed.done)
	}
	// A harness failure comes back as the error, with the done result.
	done, err = New(Config{}).Complete(ctxb, Input{Prompt: prompt("go")})
	if err == nil || done == nil || done.Reason != ReasonError {
		t.Errorf("no provider: %+v, %v", done, err)
	}
	// A cancelled run reports cancelled, not an error.
	ctx, cancel := context.WithCancel(ctxb)
	cancel()
	done, err = newAgent(script(), nil).Complete(ctx, Input{Prompt: prompt("go")})
	if err != nil || done.Reason != ReasonCancelled {
		t.Errorf("cancelled: %+v, %v", done, err)
	}
}

func ExampleAgent_Complete() {
	a := New(Config{Provider: llmtest.NewScripted(llmtest.Reply{Text: "Hello!"}), Model: "test-model", NoRetry: true})
	msg := llm.UserText("Say hello.")
	done, err := a.Complete(context.Background(), Input{Prompt: &msg})
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	fmt.Println(done.Reason, done.Text)
	// Output: completed Hello!
}
