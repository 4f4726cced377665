package runner

import (
	"fmt"
	"slices"
	"strings"

	"github.com/reinhq/rein/llm"
)

// Efforts are the reasoning efforts a conversation may ask of a model
// that takes one ([Model.TakesEffort]), least first.
var Efforts = []string{"low", "medium", "high"}

// TakesEffort reports whether the model takes a reasoning effort: the
// registry knows it reasons, and its maker's API takes the effort as
// such (OpenAI's reasoning effort) or rein's adapter turns it into a
// budget (Anthropic's thinking budget: low 1024, medium 4096, high 16384
// tokens). Gemini models take budgets, and only Gemini 3 a level, so
// they are left out; so is a model the registry does not know.
func (m *Model) TakesEffort() bool {
	if m == nil || !m.Caps.Thinking {
		return false
	}
	switch m.Caps.Provider {
	case "anthropic", "openai":
		return true
	}
	return false
}

// UseEffort sets the reasoning effort of the conversation's next runs,
// one of [Efforts], or "" for the configuration's thinking (off, or
// thinking_budget's tokens). The effort replaces thinking_budget while it
// is set; it applies while the model takes one ([Model.TakesEffort]): a
// model that does not is refused, and one switched to later runs without
// it.
func (c *Conversation) UseEffort(effort string) error {
	if effort != "" && !slices.Contains(Efforts, effort) {
		return fmt.Errorf("reasoning effort %q: give one of %s, or none for the configuration's thinking", effort, strings.Join(Efforts, ", "))
	}
	if m := c.s.model; effort != "" && !m.TakesEffort() {
		label := "the model"
		if m != nil {
			label = m.Label
		}
		return fmt.Errorf("%s takes no reasoning effort (rein knows effort for Anthropic and OpenAI models that reason); switch the model first", label)
	}
	c.effort = effort
	return nil
}

// Effort returns the reasoning effort set by [Conversation.UseEffort].
func (c *Conversation) Effort() string { return c.effort }

// thinking is the reasoning the runs ask of m: the conversation's effort
// when m takes one, else budget's tokens (thinking_budget), else none.
func (c *Conversation) thinking(m *Model, budget int) *llm.ThinkingConfig {
	switch {
	case c.effort != "" && m.TakesEffort():
		return &llm.ThinkingConfig{Effort: c.effort}
	case budget > 0:
		return &llm.ThinkingConfig{BudgetTokens: budget}
	}
	return nil
}
