package discordfake

// The JSON objects of Discord's API, as much of them as the fake serves.
// https://discord.com/developers/docs/resources/message

type user struct {
	ID            string `json:"id"`
	Username      string `json:"username"`
	GlobalName    string `json:"global_name,omitempty"`
	Discriminator string `json:"discriminator"`
	Bot           bool   `json:"bot,omitempty"`
}

type attachment struct {
	ID          string `json:"id"`
	Filename    string `json:"filename"`
	ContentType string `json:"content_type,omitempty"`
	Size        int    `json:"size"`
	URL         string `json:"url"`
	ProxyURL    string `json:"proxy_url"`
}

// Component is an action row (type 1) or a button (type 2).
type Component struct {
	Type       int         `json:"type"`
	Style      int         `json:"style,omitempty"`
	Label      string      `json:"label,omitempty"`
	CustomID   string      `json:"custom_id,omitempty"`
	Components []Component `json:"components,omitempty"`
}

type message struct {
	ID              string       `json:"id"`
	Type            int          `json:"type"`
	ChannelID       string       `json:"channel_id"`
	GuildID         string       `json:"guild_id,omitempty"`
	Author          user         `json:"author"`
	Content         string       `json:"content"`
	Timestamp       string       `json:"timestamp"`
	EditedTimestamp *string      `json:"edited_timestamp"`
	Attachments     []attachment `json:"attachments"`
	Embeds          []struct{}   `json:"embeds"`
	Mentions        []user       `json:"mentions"`
	Components      []Component  `json:"components"`
	Flags           int          `json:"flags"`
}

type member struct {
	User  user     `json:"user"`
	Roles []string `json:"roles"`
}

type interaction struct {
	ID            string          `json:"id"`
	ApplicationID string          `json:"application_id"`
	Type          int             `json:"type"`
	Data          interactionData `json:"data"`
	GuildID       string          `json:"guild_id"`
	ChannelID     string          `json:"channel_id"`
	Member        member          `json:"member"`
	Token         string          `json:"token"`
	Version       int             `json:"version"`
	Message       message         `json:"message"`
}

type interactionData struct {
	CustomID      string `json:"custom_id"`
	ComponentType int    `json:"component_type"`
}

// payload is the gateway's frame: op, d, s, t.
type payload struct {
	Op int     `json:"op"`
	D  any     `json:"d"`
	S  *int64  `json:"s"`
	T  *string `json:"t"`
}

// apiError is Discord's error body.
type apiError struct {
	Message string `json:"message"`
	Code    int    `json:"code"`
}

// rateLimited is Discord's 429 body.
type rateLimited struct {
	Message    string  `json:"message"`
	RetryAfter float64 `json:"retry_after"`
	Global     bool    `json:"global"`
}
