// Package slack is the gateway's Slack channel (SPEC GW-2). It receives
// over the Events API: Slack posts signed message and app_mention events
// to /<name>/events and signed button presses (block_actions) to
// /<name>/interactivity. It sends with chat.postMessage, edits with
// chat.update and uploads files with files.getUploadURLExternal and
// files.completeUploadExternal, through github.com/slack-go/slack.
package slack

import (
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/reinhq/rein/gateway"
	slackapi "github.com/slack-go/slack"
)

// Config is the channel's settings in the gateway's configuration file.
type Config struct {
	// TokenEnv names the variable holding the bot token, xoxb-…
	// (default SLACK_BOT_TOKEN).
	TokenEnv string `yaml:"token_env"`
	// SigningSecretEnv names the variable holding the app's signing
	// secret (default SLACK_SIGNING_SECRET).
	SigningSecretEnv string `yaml:"signing_secret_env"`
	// APIURL is Slack's Web API base (default https://slack.com/api/);
	// tests point it at the fake.
	APIURL string `yaml:"api_url"`
}

// Defaults of [Config].
const (
	DefaultTokenEnv         = "SLACK_BOT_TOKEN"
	DefaultSigningSecretEnv = "SLACK_SIGNING_SECRET"
	DefaultAPIURL           = "https://slack.com/api/"
)

// Channel is the Slack channel: a [gateway.Channel] and a
// [gateway.HTTPReceiver].
type Channel struct {
	name   string
	token  string
	secret string
	api    *slackapi.Client
	// botUser is the bot's own user id (auth.test), learned at the first
	// event, to strip "@bot" from mentions; empty until known.
	botUser botUser
}

// New returns the channel named name. It reads the bot token and the
// signing secret from the variables cfg names, through getenv.
func New(name string, cfg Config, getenv func(string) string) (*Channel, error) {
	if cfg.TokenEnv == "" {
		cfg.TokenEnv = DefaultTokenEnv
	}
	if cfg.SigningSecretEnv == "" {
		cfg.SigningSecretEnv = DefaultSigningSecretEnv
	}
	token := strings.TrimSpace(getenv(cfg.TokenEnv))
	if token == "" {
		return nil, fmt.Errorf("slack %s: set %s to the app's Bot User OAuth Token (xoxb-…; "+
			"https://api.slack.com/apps → your app → OAuth & Permissions)", name, cfg.TokenEnv)
	}
	secret := strings.TrimSpace(getenv(cfg.SigningSecretEnv))
	if secret == "" {
		return nil, fmt.Errorf("slack %s: set %s to the app's Signing Secret "+
			"(https://api.slack.com/apps → your app → Basic Information → App Credentials)", name, cfg.SigningSecretEnv)
	}
	base, _, err := gateway.APIBase(cfg.APIURL, DefaultAPIURL)
	if err != nil {
		return nil, fmt.Errorf("slack %s: %w", name, err)
	}
	api := slackapi.New(token,
		slackapi.OptionAPIURL(base+"/"), // slack-go joins method names to it
		slackapi.OptionHTTPClient(&http.Client{Timeout: 60 * time.Second}))
	return &Channel{name: name, token: token, secret: secret, api: api}, nil
}
