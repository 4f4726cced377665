package feishu

import (
	"context"
	"fmt"
	"net/url"
	"time"

	"github.com/reinhq/rein/gateway"
)

// Name implements gateway.Channel.
func (c *Channel) Name() string { return c.name }

// Limits implements gateway.Channel. A card holds at most 30 KB of JSON;
// 4000 runes of text stay well under it. Feishu allows 5 updates a second
// of one message.
func (c *Channel) Limits() gateway.Limits {
	return gateway.Limits{MaxText: 4000, CanEdit: true, EditEvery: 600 * time.Millisecond, Buttons: true, Files: true}
}

// sentMessage is the part of a message resource the channel reads.
type sentMessage struct {
	MessageID string `json:"message_id"`
	ChatID    string `json:"chat_id"`
}

// Send implements gateway.Channel. Every message is an interactive card
// (msg_type "interactive", shared), so Edit can always PATCH it — a text
// message could be edited only 20 times and never get buttons. Files
// follow as image or file messages; the reference is the card's (the
// first file's when there is no text).
//
// Each part goes with a uuid, Feishu's idempotency key: when a part fails
// for now and the gateway sends m again, the parts already posted are
// skipped and the failed one is sent with the same uuid, so a part whose
// answer was lost is not posted twice. A message with a Key (a part of a
// reply) takes its uuids from it, so that a restarted gateway sending the
// part again is deduplicated by Feishu too (within its hour).
func (c *Channel) Send(ctx context.Context, m gateway.Outgoing) (gateway.MessageRef, error) {
	hasCard := m.Text != "" || len(m.Buttons) > 0
	n := len(m.Files)
	if hasCard {
		n++
	}
	if n == 0 {
		return gateway.MessageRef{}, errEmpty
	}
	key := outgoingKey(m)
	st := c.partials.take(key, n, m.Key)
	for i := len(st.refs); i < n; i++ {
		var ref gateway.MessageRef
		var err error
		switch {
		case hasCard && i == 0:
			ref, err = c.sendCard(ctx, m, st.uuids[i])
		case hasCard:
			ref, err = c.sendFile(ctx, m.ChatID, m.Files[i-1], st.uuids[i])
		default:
			ref, err = c.sendFile(ctx, m.ChatID, m.Files[i], st.uuids[i])
		}
		if err != nil {
			if _, retry := gateway.RetryAfter(err); retry {
				c.partials.keep(key, st)
			}
			return gateway.MessageRef{}, err
		}
		st.refs = append(st.refs, ref)
	}
	return st.refs[0], nil
}

// sendCard posts m's text and buttons as a card.
func (c *Channel) sendCard(ctx context.Context, m gateway.Outgoing, uuid string) (gateway.MessageRef, error) {
	content, err := cardContent(m)
	if err != nil {
		return gateway.MessageRef{}, err
	}
	return c.sendMessage(ctx, m.ChatID, "interactive", content, uuid)
}

// sendMessage posts a message of msgType.
func (c *Channel) sendMessage(ctx context.Context, chatID, msgType, content, uuid string) (gateway.MessageRef, error) {
	var out sentMessage
	err := c.call(ctx, "send "+msgType+" message", "POST", "/open-apis/im/v1/messages?receive_id_type=chat_id",
		map[string]string{"receive_id": chatID, "msg_type": msgType, "content": content, "uuid": uuid}, &out)
	if err != nil {
		return gateway.MessageRef{}, err
	}
	if out.MessageID == "" {
		return gateway.MessageRef{}, fmt.Errorf("feishu: send %s message: the answer has no message_id", msgType)
	}
	return gateway.MessageRef{ChatID: chatID, ID: out.MessageID}, nil
}

// Edit implements gateway.Channel: it replaces the card (PATCH). Files are
// not sent again.
func (c *Channel) Edit(ctx context.Context, ref gateway.MessageRef, m gateway.Outgoing) error {
	content, err := cardContent(m)
	if err != nil {
		return err
	}
	return c.call(ctx, "update message", "PATCH", "/open-apis/im/v1/messages/"+url.PathEscape(ref.ID),
		map[string]string{"content": content}, nil)
}

// cardContent is m's card as the JSON string the content field takes.
func cardContent(m gateway.Outgoing) (string, error) {
	cd := newCard(m)
	if len(cd.Elements) == 0 {
		return "", errEmpty
	}
	b, err := marshal(cd)
	if err != nil {
		return "", fmt.Errorf("feishu: card: %w", err)
	}
	return string(b), nil
}
