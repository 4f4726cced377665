package feishu

import (
	"strings"
	"unicode"

	"github.com/reinhq/rein/gateway"
)

// card is a message card (the JSON 1.0 schema) as the gateway sends it:
// the text in a plain_text div and the buttons in one action row.
type card struct {
	Config   cardConfig `json:"config"`
	Elements []any      `json:"elements"`
}

// cardConfig: update_multi makes the card a shared one, which PATCH can
// update for everyone in the chat.
type cardConfig struct {
	WideScreenMode bool `json:"wide_screen_mode"`
	UpdateMulti    bool `json:"update_multi"`
}

type cardText struct {
	Tag     string `json:"tag"`
	Content string `json:"content"`
}

type cardDiv struct {
	Tag  string   `json:"tag"`
	Text cardText `json:"text"`
}

type cardAction struct {
	Tag     string       `json:"tag"`
	Actions []cardButton `json:"actions"`
}

type cardButton struct {
	Tag   string            `json:"tag"`
	Text  cardText          `json:"text"`
	Type  string            `json:"type"`
	Value map[string]string `json:"value"`
}

// buttonKey is the key of a button's value object that holds its Data; a
// press's event.action.value carries the object back.
const buttonKey = "data"

// newCard renders m as a card.
func newCard(m gateway.Outgoing) card {
	c := card{Config: cardConfig{WideScreenMode: true, UpdateMulti: true}}
	if text := cleanText(m.Text); text != "" {
		c.Elements = append(c.Elements, cardDiv{Tag: "div", Text: cardText{Tag: "plain_text", Content: text}})
	}
	if len(m.Buttons) > 0 {
		row := cardAction{Tag: "action"}
		for i, b := range m.Buttons {
			kind := "default"
			if i == 0 {
				kind = "primary"
			}
			row.Actions = append(row.Actions, cardButton{Tag: "button", Text: cardText{Tag: "plain_text", Content: b.Label},
				Type: kind, Value: map[string]string{buttonKey: b.Data}})
		}
		c.Elements = append(c.Elements, row)
	}
	return c
}

// cleanText drops control characters other than newlines and tabs: they
// render as nothing and cost six bytes each in the card's JSON.
func cleanText(s string) string {
	return strings.Map(func(r rune) rune {
		if r != '\n' && r != '\t' && unicode.IsControl(r) {
			return -1
		}
		return r
	}, s)
}
