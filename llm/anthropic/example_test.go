package anthropic_test

import (
	"context"
	"fmt"

	"github.com/reinhq/rein/agent"
	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/llm/anthropic"
	"github.com/reinhq/rein/llm/llmtest/mockserver"
)

// ExampleNew drives an agent with the Anthropic adapter (SPEC PROV-1). In
// a real program BaseURL is left empty and APIKey is the user's key; here
// both point at the mock vendor server of llmtest/mockserver, on
// 127.0.0.1, which speaks the Messages API and plays scripted turns. The
// adapters of llm/openai, llm/gemini and llm/ollama plug in the same way.
func ExampleNew() {
	vendor := mockserver.New()
	defer vendor.Close()
	vendor.Enqueue(mockserver.Turn{Text: "Bonjour !", Usage: llm.Usage{InputTokens: 12, OutputTokens: 3}})

	model := anthropic.New(anthropic.Config{APIKey: "test-key", BaseURL: vendor.URL})
	a := agent.New(agent.Config{Provider: model, ProviderName: "anthropic", Model: "claude-sonnet-4-5", System: "You translate to French."})
	prompt := llm.UserText("Hello!")
	done, err := a.Complete(context.Background(), agent.Input{Prompt: &prompt})
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	fmt.Println(done.Reason, done.Text, done.Usage.InputTokens, done.Usage.OutputTokens)

	sent := vendor.Requests()[0]
	fmt.Println(sent.Method, sent.Path, sent.Header.Get("X-Api-Key"))
	fmt.Println("system:", sent.Decoded.System, "| model:", sent.Decoded.Model, "| messages:", len(sent.Decoded.Messages))
	// Output:
	// completed Bonjour ! 12 3
	// POST /v1/messages test-key
	// system: You translate to French. | model: claude-sonnet-4-5 | messages: 1
}
