package agent

import (
	"strings"

	"github.com/reinhq/rein/llm"
)

// withNotices adds the caller's notices (Config.Notices: a background job
// ended, SPEC TOOL-8) to m, a user message the loop is about to append —
// the run's prompt, or a turn's tool results — as text blocks after its
// own content, where every provider accepts text. The notice is stored
// with the message, so the model sees it at its next turn and in every
// later request at the same place: the history is only appended to, and
// the prompt cache keeps its prefix. Hooks saw the prompt before (a
// user_prompt_submit hook judges what the user wrote, not rein's notice),
// and the task focus took its goal from it.
func (r *run) withNotices(m llm.Message) llm.Message {
	if r.cfg.Notices == nil {
		return m
	}
	var add []llm.Block
	for _, n := range r.cfg.Notices() {
		if strings.TrimSpace(n) != "" {
			add = append(add, &llm.Text{Text: n})
		}
	}
	if len(add) == 0 {
		return m
	}
	m.Content = append(append([]llm.Block(nil), m.Content...), add...)
	return m
}
