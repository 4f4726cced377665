// Package telegram is the gateway's Telegram channel (SPEC GW-2): a bot
// that receives by long polling getUpdates and answers with plain-text
// messages, inline keyboards for buttons, and documents or photos for
// files. It speaks the Bot API through github.com/go-telegram/bot, except
// for getUpdates, which it calls itself so the offset moves past an update
// only after the gateway stored it.
package telegram

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/go-telegram/bot"
	"github.com/reinhq/rein/gateway"
)

// Defaults of [Config].
const (
	DefaultTokenEnv    = "TELEGRAM_BOT_TOKEN"
	DefaultAPIURL      = "https://api.telegram.org"
	DefaultPollTimeout = 30 * time.Second
)

// Config is the Telegram channel's settings in the gateway's
// configuration file.
type Config struct {
	// TokenEnv names the environment variable holding the bot token
	// (default TELEGRAM_BOT_TOKEN).
	TokenEnv string `yaml:"token_env"`
	// APIURL is the Bot API's base (default https://api.telegram.org);
	// tests point it at the fake, and a self-hosted Bot API server works
	// too.
	APIURL string `yaml:"api_url"`
	// PollTimeout is how long one getUpdates waits for updates (default
	// 30s, at most 50s; whole seconds).
	PollTimeout time.Duration `yaml:"poll_timeout"`
}

// Channel is a Telegram bot. It implements [gateway.Channel] and
// [gateway.Poller].
type Channel struct {
	name        string
	tokenEnv    string
	token       string
	apiURL      string
	pollTimeout time.Duration
	bot         *bot.Bot
	// poll is the client of getUpdates and file downloads; its timeout
	// outlasts a long poll.
	poll *http.Client
	// backoff is the first wait after a failure; it doubles up to a
	// minute.
	backoff time.Duration
}

// New returns the channel named name. It reads the bot token from the
// environment variable cfg.TokenEnv through getenv; it does not call
// Telegram.
func New(name string, cfg Config, getenv func(string) string) (*Channel, error) {
	if name == "" {
		return nil, errors.New("telegram: the channel has no name")
	}
	env := cfg.TokenEnv
	if env == "" {
		env = DefaultTokenEnv
	}
	token := strings.TrimSpace(getenv(env))
	if token == "" {
		return nil, fmt.Errorf("telegram: %s is not set: create a bot with @BotFather in Telegram (/newbot) and set %s to the token it gives", env, env)
	}
	if strings.ContainsAny(token, "/?#% \t\n") {
		return nil, fmt.Errorf("telegram: %s does not look like a bot token (digits, a colon, then letters): check the value @BotFather gave", env)
	}
	api, _, err := gateway.APIBase(cfg.APIURL, DefaultAPIURL)
	if err != nil {
		return nil, fmt.Errorf("telegram: %w", err)
	}
	pt := cfg.PollTimeout
	switch {
	case pt == 0:
		pt = DefaultPollTimeout
	case pt < 0 || pt > 50*time.Second:
		return nil, fmt.Errorf("telegram: poll_timeout %s is out of range (0s to 50s)", pt)
	}
	// Sends get a client of their own: uploads of a few MB take a while.
	send := &http.Client{Timeout: 2 * time.Minute}
	b, err := bot.New(token,
		bot.WithServerURL(api),
		bot.WithSkipGetMe(),
		bot.WithHTTPClient(pt, send),
		bot.WithErrorsHandler(func(error) {}),
	)
	if err != nil {
		return nil, fmt.Errorf("telegram: %w", err)
	}
	return &Channel{
		name:        name,
		tokenEnv:    env,
		token:       token,
		apiURL:      api,
		pollTimeout: pt.Truncate(time.Second),
		bot:         b,
		poll:        &http.Client{Timeout: pt + 30*time.Second},
		backoff:     time.Second,
	}, nil
}
