package attachment

import "github.com/reinhq/rein/llm"

// Message is the user message of text and images: the text first, then
// the images in the order given (the order of their mentions). No label is
// added: a user_prompt_submit hook sees the text as the user wrote it, and
// one that rewrites it keeps the images (agent's replaceText). It checks the images together (count, total
// size). With neither text nor images it returns nil: the run continues
// a pending conversation (SPEC LOOP-9).
func Message(text string, imgs []Named, l Limits) (*llm.Message, error) {
	if text == "" && len(imgs) == 0 {
		return nil, nil
	}
	all := make([]llm.Image, len(imgs))
	for i, n := range imgs {
		all[i] = n.Image
	}
	if err := CheckSet(all, l); err != nil {
		return nil, err
	}
	m := llm.Message{Role: llm.RoleUser}
	if text != "" {
		m.Content = append(m.Content, &llm.Text{Text: text})
	}
	for _, n := range imgs {
		img := n.Image
		m.Content = append(m.Content, &img)
	}
	return &m, nil
}
