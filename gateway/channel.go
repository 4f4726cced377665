package gateway

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Channel connects one chat platform to the gateway (SPEC GW-2): it sends
// and edits messages in the platform's chats. It receives as a [Poller]
// (long polling, a websocket) or as an [HTTPReceiver] (the platform posts
// to the gateway's listen address); a channel is at least one of them.
//
// Send and Edit return a [*RetryError] when the platform asks the gateway
// to slow down (HTTP 429 with Retry-After) or is away (5xx, a network
// error): the gateway waits that long and tries again, so a reply is never
// dropped because the platform was busy.
type Channel interface {
	// Name is the channel's name in the configuration and in routing keys
	// ("telegram", "ops-hook"); the gateway sets it from the configuration.
	Name() string
	// Limits says what the platform allows.
	Limits() Limits
	// Send posts a message to a chat and returns its reference, for Edit.
	Send(ctx context.Context, m Outgoing) (MessageRef, error)
	// Edit replaces the text and buttons of a message Send posted. A
	// channel whose Limits say CanEdit is false is never asked to.
	Edit(ctx context.Context, ref MessageRef, m Outgoing) error
}

// Poller is a channel that fetches its updates (Telegram's getUpdates,
// Discord's gateway websocket).
type Poller interface {
	// Receive hands the platform's messages and button presses to h until
	// ctx ends, and returns nil then. An update is acknowledged to the
	// platform (Telegram's offset moves past it) only after h returned nil
	// for it: it is stored. When h fails, or the platform is away or
	// answers 429, Receive waits (the platform's Retry-After, else an
	// exponential backoff up to a minute) and fetches again; it returns an
	// error only when the platform refuses the channel for good (a revoked
	// token), saying what to fix.
	Receive(ctx context.Context, h Handler) error
}

// HTTPReceiver is a channel the platform posts its updates to (Slack's
// Events API, Feishu's event subscription, the generic webhook). The
// gateway serves the handler under /<channel name>/ on its listen address
// (StripPrefix'ed: the handler sees "/events", not "/slack/events").
type HTTPReceiver interface {
	// HTTPHandler returns the handler of the platform's requests. It
	// verifies each request's signature before anything else, answers 2xx
	// only after h returned nil (so the platform delivers a failed update
	// again) and 401 to a request that fails verification.
	HTTPHandler(h Handler) http.Handler
}

// Handler is the gateway's side of a channel: it stores what arrives.
// Both methods are safe for concurrent use, and idempotent by the
// update's ID (an update delivered twice is handled once).
type Handler interface {
	// HandleMessage takes a user's message. nil means it is stored (or
	// deliberately dropped, like a stranger's) and may be acknowledged.
	HandleMessage(ctx context.Context, m Inbound) error
	// HandleAction takes a button press.
	HandleAction(ctx context.Context, a Action) error
}

// Inbound is a message a user sent in a chat.
type Inbound struct {
	// ChatID is the platform's id of the conversation (a Telegram chat, a
	// Slack or Discord channel or DM, a Feishu chat); with the channel's
	// name it routes the message to its session.
	ChatID string
	// UserID is the platform's id of the sender; the allowlist names it.
	UserID string
	// UserName is how the platform shows the sender, for messages.
	UserName string
	// ID is the platform's unique id of the update carrying the message;
	// the gateway handles one ID once.
	ID   string
	Text string
	// Attachments are the files sent with the message, fetched by the
	// channel (at most [MaxAttachment] bytes each; larger ones are left
	// out and named in Text by the channel).
	Attachments []Attachment
}

// Action is a button pressed under a message the gateway sent.
type Action struct {
	ChatID, UserID, UserName string
	// ID is the platform's unique id of the press.
	ID string
	// Data is the pressed [Button]'s Data.
	Data string
	// Message is the message carrying the button.
	Message MessageRef
}

// Outgoing is a message the gateway sends.
type Outgoing struct {
	ChatID string
	// Text is plain text (no markup), at most Limits.MaxText runes.
	Text string
	// Buttons are shown under the message in one row (an inline keyboard,
	// Block Kit buttons, Discord components, a card's actions); a channel
	// without buttons never gets any.
	Buttons []Button
	// Files are sent with the message (after it, where the platform sends
	// files separately).
	Files []Attachment
	// Key, when set, names this message for good: a send of the same part
	// of the same reply again — a retry whose first try's answer was
	// lost, or a restarted gateway's — carries the same Key. A channel
	// whose platform takes an idempotency key passes it on (Feishu's
	// uuid, the webhook's "key"), so that the platform posts it once;
	// others ignore it. Progress messages have none.
	Key string
}

// Button is one button under a message.
type Button struct {
	Label string
	// Data comes back in [Action.Data]; at most 64 bytes (Telegram's
	// callback_data limit).
	Data string
}

// Attachment is a file in or out.
type Attachment struct {
	Name, MIME string
	Data       []byte
}

// MaxAttachment is the largest file a channel fetches for the model (an
// image a user sends); larger ones are refused with a note.
const MaxAttachment = 10 << 20

// MessageRef names a message the gateway sent.
type MessageRef struct {
	ChatID, ID string
}

// Limits describe what a platform allows a bot.
type Limits struct {
	// MaxText is the most runes one message holds; longer replies are
	// split at paragraph and line boundaries.
	MaxText int
	// CanEdit says messages can be edited; progress is then shown by
	// editing one message, else only the final reply is sent.
	CanEdit bool
	// EditEvery is the least time between two edits of one message (the
	// platform's rate limit, with margin).
	EditEvery time.Duration
	// Buttons says messages can carry buttons; without them a permission
	// question asks for a reply command (/approve ID, /deny ID).
	Buttons bool
	// Files says the channel sends files.
	Files bool
}

// RetryError is a send the platform refused for now: HTTP 429 (After is
// its Retry-After) or an outage (5xx, a network error; After is zero and
// the gateway backs off exponentially).
type RetryError struct {
	After time.Duration
	Err   error
}

func (e *RetryError) Error() string {
	if e.After > 0 {
		return fmt.Sprintf("%v (retry after %s)", e.Err, e.After)
	}
	return fmt.Sprintf("%v (retrying)", e.Err)
}

func (e *RetryError) Unwrap() error { return e.Err }

// RetryAfter reports whether err is a [*RetryError] and how long it asks
// to wait (zero: back off).
func RetryAfter(err error) (time.Duration, bool) {
	var re *RetryError
	if errors.As(err, &re) {
		return re.After, true
	}
	return 0, false
}

// APIBase is a channel's api_url setting made usable: raw (else def)
// without a trailing slash, and parsed; an error, for the channel to
// prefix with its name, when it is not an http(s) URL with a host.
func APIBase(raw, def string) (string, *url.URL, error) {
	base := strings.TrimRight(raw, "/")
	if base == "" {
		base = strings.TrimRight(def, "/")
	}
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", nil, fmt.Errorf("api_url %q is not an http(s) URL like %s", raw, def)
	}
	return base, u, nil
}

// Sleep waits d or until ctx ends; false when ctx ended. Channels wait
// out their backoffs with it.
func Sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
