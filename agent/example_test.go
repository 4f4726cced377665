package agent_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/reinhq/rein/agent"
	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/llm/llmtest"
	"github.com/reinhq/rein/tool"
)

// weatherIn is the input of the example's tool; its JSON Schema is derived
// from the struct (SPEC TOOL-1).
type weatherIn struct {
	City string `json:"city" jsonschema:"the city to report on"`
}

// ExampleAgent_Run runs the loop with one custom tool and prints the run's
// stream of events (SPEC LOOP-1): the model asks for the tool, the loop runs
// it, the model answers with its result. The model is llmtest.Scripted,
// which plays back the two replies below; swap in any llm.Provider (an
// adapter of llm/anthropic, llm/openai, llm/gemini, llm/ollama) for a real
// one.
func ExampleAgent_Run() {
	weather := tool.New("weather", "Reports the weather of a city.",
		tool.Meta{ReadOnly: true, ConcurrencySafe: true, Category: tool.CategoryRead},
		func(ctx context.Context, call tool.Call, in weatherIn) (tool.Result, error) {
			if in.City == "" {
				return tool.Errorf("city is empty: name a city, such as Oslo"), nil
			}
			return tool.Text(in.City + ": 4°C, light rain"), nil
		})
	tools, err := tool.NewSet(tool.OriginBuiltin, weather)
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	model := llmtest.NewScripted(
		llmtest.Reply{Text: "Let me look.", ToolCalls: []llm.ToolUse{llmtest.Call("call-1", "weather", `{"city":"Oslo"}`)}},
		llmtest.Reply{Text: "It is 4°C with light rain in Oslo: take an umbrella."},
	)
	a := agent.New(agent.Config{Provider: model, Model: "test-model", Tools: tools, System: "You are a weather assistant."})

	prompt := llm.UserText("Do I need an umbrella in Oslo?")
	for ev, err := range a.Run(context.Background(), agent.Input{SessionID: "s1", RunID: "r1", Prompt: &prompt}) {
		if err != nil {
			fmt.Println("error:", err)
			return
		}
		fmt.Printf("[turn %d] ", ev.Turn)
		switch ev.Type {
		case agent.EventRunStart:
			fmt.Println(ev.Type, ev.RunStart.Model)
		case agent.EventTextDelta:
			fmt.Printf("%s %q\n", ev.Type, ev.Text)
		case agent.EventToolStart:
			fmt.Println(ev.Type, ev.Tool.Name, string(ev.Tool.Input))
		case agent.EventToolEnd:
			fmt.Println(ev.Type, ev.Tool.Name, ev.Tool.Outcome, ev.Tool.Output)
		case agent.EventMessage:
			fmt.Println(ev.Type, ev.Message.Role, blockKinds(ev.Message))
		case agent.EventDone:
			fmt.Println(ev.Type, ev.Done.Reason, "after", ev.Done.Turns, "turns and", ev.Done.Stats.ToolCalls, "tool call")
			fmt.Println("answer:", ev.Done.Text)
		default:
			fmt.Println(ev.Type)
		}
	}
	// Output:
	// [turn 0] run_start test-model
	// [turn 0] message user text
	// [turn 1] text_delta "Let me look."
	// [turn 1] usage
	// [turn 1] message assistant text tool_use(weather)
	// [turn 1] tool_start weather {"city":"Oslo"}
	// [turn 1] tool_end weather ok Oslo: 4°C, light rain
	// [turn 1] message user tool_result
	// [turn 2] text_delta "It is 4°C with light rain in Oslo: take an umbrella."
	// [turn 2] usage
	// [turn 2] message assistant text
	// [turn 2] done completed after 2 turns and 1 tool call
	// answer: It is 4°C with light rain in Oslo: take an umbrella.
}

// blockKinds names the content blocks of a message, for the example's output.
func blockKinds(m *llm.Message) string {
	var kinds []string
	for _, b := range m.Content {
		switch b := b.(type) {
		case *llm.Text:
			kinds = append(kinds, "text")
		case *llm.ToolUse:
			kinds = append(kinds, "tool_use("+b.Name+")")
		case *llm.ToolResult:
			kinds = append(kinds, "tool_result")
		default:
			kinds = append(kinds, fmt.Sprintf("%T", b))
		}
	}
	return strings.Join(kinds, " ")
}
