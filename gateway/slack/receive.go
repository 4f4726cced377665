package slack

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"

	slackapi "github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"

	"github.com/reinhq/rein/gateway"
)

// maxBody caps a request Slack posts (events carry no file contents).
const maxBody = 1 << 20

// HTTPHandler implements gateway.HTTPReceiver. It serves POST /events
// (the Events API's Request URL) and POST /interactivity (the
// Interactivity Request URL). Every request is verified first: its
// X-Slack-Signature must be the HMAC-SHA256 of "v0:" + timestamp + ":" +
// body under the signing secret, with X-Slack-Request-Timestamp within
// five minutes, else 401. A message is answered 200 only after h stored
// it; 500 makes Slack deliver it again (with X-Slack-Retry-Num).
func (c *Channel) HTTPHandler(h gateway.Handler) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /events", func(w http.ResponseWriter, r *http.Request) {
		body, ok := c.verified(w, r)
		if !ok {
			return
		}
		c.event(w, r.Context(), body, h)
	})
	mux.HandleFunc("POST /interactivity", func(w http.ResponseWriter, r *http.Request) {
		body, ok := c.verified(w, r)
		if !ok {
			return
		}
		c.interaction(w, r.Context(), body, h)
	})
	return mux
}

// verified reads r's body and checks its signature; false when it
// answered an error.
func (c *Channel) verified(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	if err != nil {
		http.Error(w, "the body is larger than 1 MiB or unreadable", http.StatusRequestEntityTooLarge)
		return nil, false
	}
	if err := Verify(r.Header, body, c.secret); err != nil {
		http.Error(w, err.Error(), http.StatusUnauthorized)
		return nil, false
	}
	return body, true
}

// Verify checks a request Slack signed with secret: X-Slack-Signature
// and X-Slack-Request-Timestamp (at most five minutes off) over body.
func Verify(header http.Header, body []byte, secret string) error {
	sv, err := slackapi.NewSecretsVerifier(header, secret)
	if err != nil {
		return fmt.Errorf("the request is not signed by Slack (%v): check the signing secret and the clock", err)
	}
	if _, err := sv.Write(body); err != nil {
		return err
	}
	if err := sv.Ensure(); err != nil {
		return fmt.Errorf("X-Slack-Signature does not match: check the signing secret (%v)", err)
	}
	return nil
}

// event handles an Events API request: the url_verification challenge,
// and message and app_mention events.
func (c *Channel) event(w http.ResponseWriter, ctx context.Context, body []byte, h gateway.Handler) {
	if !json.Valid(body) {
		http.Error(w, "the body is not JSON", http.StatusBadRequest)
		return
	}
	// The signature stands for the verification token, which Slack
	// deprecates.
	ev, err := slackevents.ParseEvent(body, slackevents.OptionNoVerifyToken())
	if err != nil {
		// An event type the library does not know, or one we cannot
		// read: Slack would only send it again. Acknowledge and drop.
		ok(w)
		return
	}
	switch ev.Type {
	case slackevents.URLVerification:
		uv, _ := ev.Data.(*slackevents.EventsAPIURLVerificationEvent)
		if uv == nil {
			http.Error(w, "url_verification without a challenge", http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]string{"challenge": uv.Challenge})
		return
	case slackevents.CallbackEvent:
	default:
		ok(w)
		return
	}
	in, skip := c.inbound(ev.InnerEvent.Data)
	if skip {
		ok(w)
		return
	}
	in.Text = c.stripMention(ctx, in.Text)
	var files []slackapi.File
	if m, isMsg := ev.InnerEvent.Data.(*slackevents.MessageEvent); isMsg && m.Message != nil {
		files = m.Message.Files
	} else if a, isMention := ev.InnerEvent.Data.(*slackevents.AppMentionEvent); isMention {
		files = a.Files
	}
	for _, f := range files {
		att, note, err := c.attachment(ctx, f)
		if err != nil {
			http.Error(w, "a file could not be fetched; deliver the event again: "+err.Error(), http.StatusInternalServerError)
			return
		}
		if note != "" {
			in.Text = strings.TrimSpace(in.Text + "\n" + note)
		}
		if att != nil {
			in.Attachments = append(in.Attachments, *att)
		}
	}
	done(w, h.HandleMessage(ctx, in))
}

// messageSubtypes are the message subtypes that are a user writing: a
// plain message, one with files, a thread reply sent to the channel too.
// Edits (message_changed), deletions, joins and bots' messages are not.
var messageSubtypes = map[string]bool{"": true, "file_share": true, "thread_broadcast": true}

// inbound reads a message or app_mention event; skip says it is none a
// user wrote (a bot's, the bot's own, an edit, another event type).
// Inbound.ID is "<channel>/<ts>", the message's identity: it is the same
// in every delivery of the event and in the message and app_mention
// events Slack sends for one message mentioning the bot, so the message
// is answered once.
func (c *Channel) inbound(data any) (in gateway.Inbound, skip bool) {
	switch e := data.(type) {
	case *slackevents.MessageEvent:
		if e.BotID != "" || !messageSubtypes[e.SubType] || e.User == "" || e.Channel == "" || e.TimeStamp == "" {
			return in, true
		}
		if e.Message != nil && e.Message.BotID != "" {
			return in, true
		}
		return gateway.Inbound{ChatID: e.Channel, UserID: e.User, UserName: e.User, ID: e.Channel + "/" + e.TimeStamp, Text: e.Text}, false
	case *slackevents.AppMentionEvent:
		if e.BotID != "" || e.Edited != nil || e.User == "" || e.Channel == "" || e.TimeStamp == "" {
			return in, true
		}
		return gateway.Inbound{ChatID: e.Channel, UserID: e.User, UserName: e.User, ID: e.Channel + "/" + e.TimeStamp, Text: e.Text}, false
	}
	return in, true
}

// interaction handles an interactivity request: a form with the JSON
// payload; block_actions presses of the gateway's buttons become Actions.
func (c *Channel) interaction(w http.ResponseWriter, ctx context.Context, body []byte, h gateway.Handler) {
	a, handle, err := ParseInteraction(body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if !handle {
		ok(w)
		return
	}
	done(w, h.HandleAction(ctx, a))
}

// ParseInteraction reads an interactivity request's form body: a
// block_actions payload pressing one of the gateway's buttons is an
// Action (handle true); other interactions are not for the gateway.
// Action.ID is the press's trigger_id, unique per press.
func ParseInteraction(body []byte) (a gateway.Action, handle bool, err error) {
	form, err := url.ParseQuery(string(body))
	if err != nil {
		return a, false, fmt.Errorf("the body is not a form: %v", err)
	}
	payload := form.Get("payload")
	if payload == "" {
		return a, false, fmt.Errorf("the form has no payload")
	}
	var ic slackapi.InteractionCallback
	if err := json.Unmarshal([]byte(payload), &ic); err != nil {
		return a, false, fmt.Errorf("the payload is not an interaction: %v", err)
	}
	if ic.Type != slackapi.InteractionTypeBlockActions {
		return a, false, nil
	}
	var act *slackapi.BlockAction
	for _, ba := range ic.ActionCallback.BlockActions {
		if ba != nil && strings.HasPrefix(ba.ActionID, "rein_button_") {
			act = ba
			break
		}
	}
	chat := ic.Container.ChannelID
	if chat == "" {
		chat = ic.Channel.ID
	}
	msg := ic.Container.MessageTs
	if msg == "" {
		msg = ic.Message.Timestamp
	}
	if act == nil || ic.User.ID == "" || chat == "" || msg == "" {
		return a, false, nil
	}
	id := ic.TriggerID
	if id == "" {
		id = chat + "/" + msg + "/" + ic.User.ID + "/" + act.ActionTs
	}
	name := ic.User.Name
	if name == "" {
		name = ic.User.ID
	}
	return gateway.Action{ChatID: chat, UserID: ic.User.ID, UserName: name, ID: "press/" + id, Data: act.Value,
		Message: gateway.MessageRef{ChatID: chat, ID: msg}}, true, nil
}

// botUser is the bot's user id, learned once with auth.test.
type botUser struct {
	mu sync.Mutex
	id string
}

// stripMention drops a leading mention of the bot ("<@U123> hi" → "hi").
func (c *Channel) stripMention(ctx context.Context, text string) string {
	if !strings.HasPrefix(text, "<@") {
		return text
	}
	c.botUser.mu.Lock()
	if c.botUser.id == "" {
		if resp, err := c.api.AuthTestContext(ctx); err == nil {
			c.botUser.id = resp.UserID
		}
	}
	id := c.botUser.id
	c.botUser.mu.Unlock()
	if id == "" {
		return text
	}
	if rest, found := strings.CutPrefix(text, "<@"+id+">"); found {
		return strings.TrimSpace(rest)
	}
	return text
}

func ok(w http.ResponseWriter) { w.WriteHeader(http.StatusOK) }

// done answers a handled update: 200 once stored, 500 (Slack delivers it
// again) when not.
func done(w http.ResponseWriter, err error) {
	if err != nil {
		http.Error(w, "not stored; deliver it again", http.StatusInternalServerError)
		return
	}
	ok(w)
}
