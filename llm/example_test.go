package llm_test

import (
	"context"
	"fmt"
	"iter"
	"strings"

	"github.com/reinhq/rein/llm"
)

// ExampleProviderFunc plugs in a model of one's own: anything that streams
// deltas ending with one DeltaDone carrying the whole reply is an
// llm.Provider (SPEC PROV-1), and an agent.Config takes it as its Provider.
// This one answers in upper case what the user said last.
func ExampleProviderFunc() {
	shout := llm.ProviderFunc(func(ctx context.Context, req *llm.Request) iter.Seq2[llm.Delta, error] {
		return func(yield func(llm.Delta, error) bool) {
			if err := ctx.Err(); err != nil {
				yield(llm.Delta{}, &llm.Error{Kind: llm.KindCancelled, Provider: "shout", Err: err})
				return
			}
			if len(req.Messages) == 0 {
				yield(llm.Delta{}, &llm.Error{Kind: llm.KindBadRequest, Provider: "shout",
					Message: "the request holds no message: send at least the user's"})
				return
			}
			words := strings.Fields(strings.ToUpper(req.Messages[len(req.Messages)-1].TextOf()))
			for i, w := range words {
				if i > 0 {
					w = " " + w
				}
				if !yield(llm.Delta{Kind: llm.DeltaText, Text: w}, nil) {
					return // the caller stopped reading
				}
			}
			msg := llm.Message{Role: llm.RoleAssistant, Provider: "shout", Model: req.Model,
				Content: []llm.Block{&llm.Text{Text: strings.Join(words, " ")}}}
			yield(llm.Delta{Kind: llm.DeltaDone, Response: &llm.Response{Message: msg, StopReason: llm.StopEndTurn,
				Usage: llm.Usage{InputTokens: 4, OutputTokens: int64(len(words))}}}, nil)
		}
	})

	// Stream it ...
	req := &llm.Request{Model: "loud-1", Messages: []llm.Message{llm.UserText("hello there, model")}}
	var deltas []string
	for d, err := range shout.Stream(context.Background(), req) {
		if err != nil {
			fmt.Println("error:", err)
			return
		}
		if d.Kind == llm.DeltaText {
			deltas = append(deltas, fmt.Sprintf("%q", d.Text))
		}
	}
	fmt.Println(strings.Join(deltas, " "))

	// ... or wait for the whole reply.
	resp, err := llm.Complete(context.Background(), shout, req)
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	fmt.Println(resp.Message.TextOf(), resp.StopReason, resp.Usage.OutputTokens)

	_, err = llm.Complete(context.Background(), shout, &llm.Request{Model: "loud-1"})
	fmt.Println(err)
	// Output:
	// "HELLO" " THERE," " MODEL"
	// HELLO THERE, MODEL end_turn 3
	// shout: bad_request: the request holds no message: send at least the user's
}
