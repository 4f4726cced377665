package openai_test

import (
	"testing"

	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/llm/llmtest"
	"github.com/reinhq/rein/llm/llmtest/mockserver"
	"github.com/reinhq/rein/llm/openai"
)

// TestChatConformance runs the provider suite (PROV-1, PROV-5, PROV-7,
// PROV-9) over the Chat Completions wire format.
//
// It runs as a compatible reasoning server (OpenRouter): OpenAI's own Chat
// Completions streams no visible reasoning, and gets none back (the
// "chat" golden body pins what OpenAI itself is sent).
func TestChatConformance(t *testing.T) {
	llmtest.RunConformance(t, llmtest.Harness{
		Vendor: mockserver.OpenAIChat, Provider: "openrouter", Model: "gpt-4.1", OtherModel: "gpt-4.1-mini",
		New: func(baseURL, apiKey string) llm.Provider {
			return openai.NewChat(openai.Config{Name: "openrouter", APIKey: apiKey, BaseURL: baseURL + "/v1"})
		},
		// "stop" also answers a stop sequence, which reads back as end_turn.
		StopReasons: []llm.StopReason{llm.StopEndTurn, llm.StopToolUse, llm.StopMaxTokens, llm.StopRefusal},
	})
}

// TestResponsesConformance runs the provider suite over the Responses API.
func TestResponsesConformance(t *testing.T) {
	llmtest.RunConformance(t, llmtest.Harness{
		Vendor: mockserver.OpenAIResponses, Provider: "openai", Model: "gpt-5", OtherModel: "gpt-5-mini",
		New: func(baseURL, apiKey string) llm.Provider {
			return openai.NewResponses(openai.Config{APIKey: apiKey, BaseURL: baseURL + "/v1"})
		},
		StopReasons: []llm.StopReason{llm.StopEndTurn, llm.StopToolUse, llm.StopMaxTokens, llm.StopRefusal},
	})
}
