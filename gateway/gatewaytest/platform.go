// Package gatewaytest holds what tests of the gateway's channels share: the
// [Platform] a local fake of a chat platform implements, and the suite
// every channel passes against its fake ([RunChannel]).
package gatewaytest

import (
	"testing"
	"time"

	"github.com/reinhq/rein/gateway"
)

// Platform is a local fake of a chat platform's API (on 127.0.0.1) that
// speaks the platform's wire format, as a channel's real client library
// sees it. Tests act as the platform's users through it.
type Platform interface {
	// Target tells a platform that posts its updates (an
	// [gateway.HTTPReceiver]'s) where the gateway serves the channel:
	// "http://127.0.0.1:PORT/NAME". A polled platform ignores it.
	Target(base string)
	// Send makes user send text in chat. A polled platform queues the
	// update for the bot's next fetch; a posting platform posts it and,
	// when the post fails (the gateway is down, it answered non-2xx),
	// keeps it and posts it again at the next Send or Redeliver, as
	// platforms retry.
	Send(t testing.TB, chatID, userID, text string)
	// Press makes user press the button with data under the bot's message.
	Press(t testing.TB, msg gateway.MessageRef, userID, data string)
	// Redeliver delivers the newest update again, as a platform does
	// that did not see the acknowledgement.
	Redeliver(t testing.TB)
	// Messages returns the bot's messages in a chat, oldest first, as they
	// stand now (edits applied). Safe for concurrent use.
	Messages(chatID string) []Message
	// Throttle makes the next n calls of the bot that send or edit a
	// message fail with the platform's 429 and a Retry-After of after
	// (whole seconds where the platform's field is in seconds).
	Throttle(n int, after time.Duration)
	// Throttled counts the calls answered 429 so far.
	Throttled() int
}

// Message is a message the bot sent, as it stands.
type Message struct {
	ID      string
	Text    string
	Buttons []gateway.Button
	Files   []gateway.Attachment
	// Edits counts the edits it had.
	Edits int
}
