package builtin

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/reinhq/rein/tool"
)

// Asker puts a question to the user; the front end implements it. Ask
// blocks until the user answers or ctx is done. options, when not empty,
// are suggested answers; the user may still answer freely.
type Asker interface {
	Ask(ctx context.Context, question string, options []string) (string, error)
}

// AskerFunc adapts a function to [Asker].
type AskerFunc func(ctx context.Context, question string, options []string) (string, error)

// Ask calls f.
func (f AskerFunc) Ask(ctx context.Context, question string, options []string) (string, error) {
	return f(ctx, question, options)
}

var askSchema = tool.NewStaticSchema[askIn](nil)

type askIn struct {
	Question string   `json:"question" jsonschema:"one clear question"`
	Options  []string `json:"options,omitempty" jsonschema:"suggested answers"`
}

const askDesc = "Asks the user a question and waits for the answer."

// AskUserName is the ask_user tool's name.
const AskUserName = "ask_user"

// CallAsker puts a question to the user on behalf of the call callID: a
// server's run keys the answer, given over its API, by the call's id.
type CallAsker interface {
	AskCall(ctx context.Context, callID, question string, options []string) (string, error)
}

// NoAnswerError is an asker's error when nobody answered within After;
// the model is told so and goes on.
type NoAnswerError struct{ After time.Duration }

func (e NoAnswerError) Error() string { return "nobody answered within " + e.After.String() }

// ErrDeclined is an asker's error when the user chose not to answer (Esc
// in the terminal UI); the model is told so and goes on.
var ErrDeclined = errors.New("the user declined to answer")

// NewAskUser returns the ask_user tool. With a nil asker every call returns
// an error result telling the model to go on with its best judgement.
func NewAskUser(a Asker) tool.Tool {
	if a == nil {
		return newAskUser(nil)
	}
	return newAskUser(func(ctx context.Context, _ tool.Call, q string, options []string) (string, error) {
		return a.Ask(ctx, q, options)
	})
}

// NewAskUserByCall is [NewAskUser] asking through a CallAsker: the same
// tool, spec and results.
func NewAskUserByCall(a CallAsker) tool.Tool {
	return newAskUser(func(ctx context.Context, call tool.Call, q string, options []string) (string, error) {
		return a.AskCall(ctx, call.ID, q, options)
	})
}

func newAskUser(ask func(ctx context.Context, call tool.Call, question string, options []string) (string, error)) tool.Tool {
	return tool.DefineStatic(AskUserName, askDesc, tool.Meta{ReadOnly: true, Category: tool.CategorySession}, askSchema,
		func(ctx context.Context, call tool.Call, in askIn) (tool.Result, error) {
			q := strings.TrimSpace(in.Question)
			if q == "" {
				return tool.Errorf("question is empty"), nil
			}
			if ask == nil {
				return tool.Errorf("no user can be asked in this session; proceed with your best judgement and state the assumptions you make"), nil
			}
			ans, err := ask(ctx, call, q, in.Options)
			var none NoAnswerError
			switch {
			case errors.Is(err, ErrDeclined):
				return tool.Text("The user declined to answer; proceed with your best judgement and state the assumptions you make."), nil
			case errors.As(err, &none):
				return tool.Errorf("nobody answered the question within %s; proceed with your best judgement and state the assumptions you make", none.After), nil
			case err != nil:
				return tool.Errorf("the question could not be asked (%v); proceed with your best judgement and state your assumptions", err), nil
			}
			if ans = strings.TrimSpace(ans); ans == "" {
				return tool.Text("The user gave no answer; proceed with your best judgement."), nil
			}
			return tool.Text("The user answered: " + ans), nil
		})
}
