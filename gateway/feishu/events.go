package feishu

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/reinhq/rein/gateway"
)

// envelope is a request of the event subscription: a url_verification
// challenge, a schema 2.0 event, or (with an encrypt key) either of them
// encrypted.
type envelope struct {
	Encrypt string `json:"encrypt"`

	// url_verification (and schema 1.0 events)
	Type      string `json:"type"`
	Challenge string `json:"challenge"`
	Token     string `json:"token"`

	Schema string          `json:"schema"`
	Header eventHeader     `json:"header"`
	Event  json.RawMessage `json:"event"`
}

type eventHeader struct {
	EventID   string `json:"event_id"`
	EventType string `json:"event_type"`
	Token     string `json:"token"`
	AppID     string `json:"app_id"`
}

// token is the verification token the request carries.
func (e *envelope) token() string {
	if e.Schema == "2.0" {
		return e.Header.Token
	}
	return e.Token
}

// messageEvent is im.message.receive_v1's event.
type messageEvent struct {
	Sender struct {
		SenderID struct {
			OpenID string `json:"open_id"`
		} `json:"sender_id"`
		SenderType string `json:"sender_type"`
	} `json:"sender"`
	Message struct {
		MessageID   string `json:"message_id"`
		ChatID      string `json:"chat_id"`
		MessageType string `json:"message_type"`
		Content     string `json:"content"`
		Mentions    []struct {
			Key  string `json:"key"`
			Name string `json:"name"`
		} `json:"mentions"`
	} `json:"message"`
}

// cardActionEvent is card.action.trigger's event.
type cardActionEvent struct {
	Operator struct {
		OpenID string `json:"open_id"`
	} `json:"operator"`
	Action struct {
		Value json.RawMessage `json:"value"`
	} `json:"action"`
	Context struct {
		OpenMessageID string `json:"open_message_id"`
		OpenChatID    string `json:"open_chat_id"`
	} `json:"context"`
}

// update is what one request asks of the channel: at most one of its
// fields is set; none means the request is acknowledged and ignored.
type update struct {
	challenge string
	message   *gateway.Inbound
	// images are the image keys of message, fetched from messageID.
	images    []string
	messageID string
	action    *gateway.Action
}

// parseEnvelope reads a request's body, decrypting it with encryptKey
// when it is encrypted.
func parseEnvelope(body []byte, encryptKey string) (*envelope, error) {
	var e envelope
	if err := json.Unmarshal(body, &e); err != nil {
		return nil, fmt.Errorf("the body is not a JSON object: %w", err)
	}
	if e.Encrypt == "" {
		return &e, nil
	}
	if encryptKey == "" {
		return nil, errors.New("the event is encrypted but no Encrypt Key is configured: set encrypt_key_env's variable")
	}
	plain, err := decrypt(e.Encrypt, encryptKey)
	if err != nil {
		return nil, err
	}
	var d envelope
	if err := json.Unmarshal(plain, &d); err != nil {
		return nil, fmt.Errorf("the decrypted event is not a JSON object: %w", err)
	}
	if d.Encrypt != "" {
		return nil, errors.New("the decrypted event is encrypted again")
	}
	return &d, nil
}

// parseUpdate says what a verified envelope asks.
func parseUpdate(e *envelope) (update, error) {
	if e.Type == "url_verification" {
		if e.Challenge == "" {
			return update{}, errors.New("url_verification without a challenge")
		}
		return update{challenge: e.Challenge}, nil
	}
	if e.Schema != "2.0" {
		return update{}, nil // a schema 1.0 event: none the channel subscribes to
	}
	switch e.Header.EventType {
	case "im.message.receive_v1":
		return parseMessage(e)
	case "card.action.trigger":
		return parseAction(e)
	}
	return update{}, nil
}

func parseMessage(e *envelope) (update, error) {
	var ev messageEvent
	if err := json.Unmarshal(e.Event, &ev); err != nil {
		return update{}, fmt.Errorf("im.message.receive_v1: %w", err)
	}
	if ev.Sender.SenderType == "app" {
		return update{}, nil // a bot's message, maybe this one's
	}
	m := ev.Message
	if e.Header.EventID == "" || m.ChatID == "" || ev.Sender.SenderID.OpenID == "" {
		return update{}, errors.New("im.message.receive_v1 without event_id, chat_id or the sender's open_id")
	}
	in := &gateway.Inbound{ChatID: m.ChatID, UserID: ev.Sender.SenderID.OpenID, ID: e.Header.EventID}
	u := update{message: in, messageID: m.MessageID}
	keys := make([]string, 0, len(m.Mentions))
	for _, mn := range m.Mentions {
		keys = append(keys, mn.Key)
	}
	switch m.MessageType {
	case "text":
		var c struct {
			Text string `json:"text"`
		}
		if err := json.Unmarshal([]byte(m.Content), &c); err != nil {
			return update{}, fmt.Errorf("a text message's content: %w", err)
		}
		in.Text = stripMentions(c.Text, keys)
	case "image":
		var c struct {
			ImageKey string `json:"image_key"`
		}
		if err := json.Unmarshal([]byte(m.Content), &c); err != nil {
			return update{}, fmt.Errorf("an image message's content: %w", err)
		}
		if c.ImageKey != "" {
			u.images = append(u.images, c.ImageKey)
		}
	case "post":
		text, images, err := parsePost(m.Content)
		if err != nil {
			return update{}, err
		}
		in.Text, u.images = stripMentions(text, keys), images
	default:
		in.Text = fmt.Sprintf("(a Feishu %q message, which this gateway cannot read: send text or images)", m.MessageType)
	}
	return u, nil
}

// parsePost reads a rich-text message: its title and paragraphs as lines
// of text, and its images.
func parsePost(content string) (string, []string, error) {
	var c struct {
		Title   string `json:"title"`
		Content [][]struct {
			Tag      string `json:"tag"`
			Text     string `json:"text"`
			Href     string `json:"href"`
			ImageKey string `json:"image_key"`
		} `json:"content"`
	}
	if err := json.Unmarshal([]byte(content), &c); err != nil {
		return "", nil, fmt.Errorf("a post message's content: %w", err)
	}
	var lines, images []string
	if c.Title != "" {
		lines = append(lines, c.Title)
	}
	for _, para := range c.Content {
		var b strings.Builder
		for _, el := range para {
			switch el.Tag {
			case "img":
				if el.ImageKey != "" {
					images = append(images, el.ImageKey)
				}
			case "a":
				b.WriteString(el.Text)
				if el.Href != "" && el.Href != el.Text {
					b.WriteString(" (" + el.Href + ")")
				}
			default:
				b.WriteString(el.Text)
			}
		}
		if s := strings.TrimSpace(b.String()); s != "" {
			lines = append(lines, s)
		}
	}
	return strings.Join(lines, "\n"), images, nil
}

// mentionRe finds the placeholders Feishu puts where a message @-mentions
// someone.
var mentionRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`@_(?:user_\d+|all) ?`) })

// stripMentions removes the mention placeholders (the bot's own among
// them) from text.
func stripMentions(text string, keys []string) string {
	for _, k := range keys {
		if k != "" {
			text = strings.ReplaceAll(text, k+" ", "")
			text = strings.ReplaceAll(text, k, "")
		}
	}
	return strings.TrimSpace(mentionRe().ReplaceAllString(text, ""))
}

func parseAction(e *envelope) (update, error) {
	var ev cardActionEvent
	if err := json.Unmarshal(e.Event, &ev); err != nil {
		return update{}, fmt.Errorf("card.action.trigger: %w", err)
	}
	var value map[string]any
	if len(ev.Action.Value) > 0 {
		// A value of another shape is not a button the gateway made.
		_ = json.Unmarshal(ev.Action.Value, &value)
	}
	data, _ := value[buttonKey].(string)
	if data == "" {
		return update{}, nil
	}
	if e.Header.EventID == "" || ev.Operator.OpenID == "" || ev.Context.OpenMessageID == "" {
		return update{}, errors.New("card.action.trigger without event_id, the operator's open_id or open_message_id")
	}
	return update{action: &gateway.Action{
		ChatID:  ev.Context.OpenChatID,
		UserID:  ev.Operator.OpenID,
		ID:      e.Header.EventID,
		Data:    data,
		Message: gateway.MessageRef{ChatID: ev.Context.OpenChatID, ID: ev.Context.OpenMessageID},
	}}, nil
}
