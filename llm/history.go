package llm

// ThinkingDowngrade says what [PrepareHistory] does with the reasoning of a
// message produced by another model.
type ThinkingDowngrade uint8

const (
	// DowngradeDrop removes thinking blocks (the default): another model cannot
	// verify their signatures and gains little from a stranger's reasoning.
	DowngradeDrop ThinkingDowngrade = iota
	// DowngradeText keeps visible reasoning as a plain text block wrapped in
	// <thinking> tags; redacted reasoning is still dropped.
	DowngradeText
)

// PrepareHistory returns msgs ready to send to provider/model (SPEC PROV-5).
// Assistant messages that model produced pass through untouched, signatures
// and all, so they replay byte for byte. Messages of any other provider or
// model lose what only their producer can read: thinking blocks are dropped or
// turned into text per mode, and tool-call signatures are cleared. [Opaque]
// blocks go only to the provider that produced them (any of its models: they
// are content, not reasoning) and only when their message and the block both
// name it; everywhere else they are dropped, which [OpaqueLeftOut] reports. An
// assistant message left with no content is dropped.
//
// msgs is never modified; the result shares the untouched messages.
func PrepareHistory(msgs []Message, provider, model string, mode ThinkingDowngrade) []Message {
	if !needsDowngrade(msgs, provider, model) {
		return msgs
	}
	out := make([]Message, 0, len(msgs))
	for _, m := range msgs {
		if !messageNeedsDowngrade(m, provider, model) {
			out = append(out, m)
			continue
		}
		same := m.Provider == provider && m.Model == model
		d := m
		d.Content = make([]Block, 0, len(m.Content))
		for _, b := range m.Content {
			switch b := b.(type) {
			case *Opaque:
				if replayable(m, b, provider) {
					d.Content = append(d.Content, b)
				}
			case *Thinking:
				if same {
					d.Content = append(d.Content, b)
					continue
				}
				if mode == DowngradeText && !b.Redacted && b.Text != "" {
					d.Content = append(d.Content, &Text{Text: "<thinking>\n" + b.Text + "\n</thinking>"})
				}
			case *ToolUse:
				if b.Signature != "" && !same {
					c := *b
					c.Signature = ""
					d.Content = append(d.Content, &c)
				} else {
					d.Content = append(d.Content, b)
				}
			default:
				d.Content = append(d.Content, b)
			}
		}
		if len(d.Content) > 0 {
			out = append(out, d)
		}
	}
	return out
}

func needsDowngrade(msgs []Message, provider, model string) bool {
	for _, m := range msgs {
		if messageNeedsDowngrade(m, provider, model) {
			return true
		}
	}
	return false
}

// messageNeedsDowngrade reports whether m holds a block provider/model may
// not receive as it is.
func messageNeedsDowngrade(m Message, provider, model string) bool {
	if m.Role != RoleAssistant {
		return false
	}
	same := m.Provider == provider && m.Model == model
	for _, b := range m.Content {
		switch b := b.(type) {
		case *Opaque:
			if !replayable(m, b, provider) {
				return true
			}
		case *Thinking:
			if !same {
				return true
			}
		case *ToolUse:
			if b.Signature != "" && !same {
				return true
			}
		}
	}
	return false
}
