// Package discord is the gateway's Discord channel (SPEC GW-2): a bot that
// receives over the Discord Gateway websocket and answers with plain-text
// messages, button components, and file uploads. It speaks Discord through
// github.com/bwmarrin/discordgo.
//
// discordgo's REST endpoints are package variables fixed to
// https://discord.com; instead of changing those globals, the channel gives
// its sessions an HTTP client whose transport sends requests addressed to
// discord.com to [Config.APIURL]. So several channels in one process may
// talk to different API bases (a fake in tests, a proxy). The websocket
// URL comes from the API's GET /gateway answer.
package discord

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/bwmarrin/discordgo"
	"github.com/reinhq/rein/gateway"
)

// Defaults of [Config].
const (
	DefaultTokenEnv = "DISCORD_BOT_TOKEN"
	DefaultAPIURL   = "https://discord.com"
)

// Intents are the gateway intents the channel identifies with: messages in
// servers and in DMs, with their content.
const Intents = discordgo.IntentsGuildMessages | discordgo.IntentsDirectMessages | discordgo.IntentsMessageContent

// Config is the Discord channel's settings in the gateway's configuration
// file.
type Config struct {
	// TokenEnv names the environment variable holding the bot token
	// (default DISCORD_BOT_TOKEN).
	TokenEnv string `yaml:"token_env"`
	// APIURL is Discord's base, before /api/v9 (default
	// https://discord.com); tests point it at the fake.
	APIURL string `yaml:"api_url"`
}

// Channel is a Discord bot. It implements [gateway.Channel] and
// [gateway.Poller].
type Channel struct {
	name string
	// token is "Bot <token>", as discordgo sends it.
	token string
	// client carries the REST calls and attachment downloads; its
	// transport points discord.com at the configured API base.
	client *http.Client
	// rest is the session Send and Edit use (its own rate-limit buckets).
	rest *discordgo.Session
	// backoff is the first wait after a failure; it doubles up to a
	// minute.
	backoff time.Duration
	// seen remembers, per chat, the newest message the handler stored, to
	// fetch what arrived while the gateway was down.
	seen *seenChats
}

// New returns the channel named name. It reads the bot token from the
// environment variable cfg.TokenEnv through getenv; it does not call
// Discord.
func New(name string, cfg Config, getenv func(string) string) (*Channel, error) {
	if name == "" {
		return nil, errors.New("discord: the channel has no name")
	}
	env := cfg.TokenEnv
	if env == "" {
		env = DefaultTokenEnv
	}
	token := strings.TrimSpace(getenv(env))
	token = strings.TrimSpace(strings.TrimPrefix(token, "Bot "))
	if token == "" {
		return nil, fmt.Errorf("discord: %s is not set: create an application at https://discord.com/developers/applications, add a bot (Bot tab, Reset Token), enable the Message Content intent there, and set %s to the bot's token", env, env)
	}
	if strings.ContainsAny(token, " \t\r\n") {
		return nil, fmt.Errorf("discord: %s does not look like a bot token (it has blanks): copy the token from the Bot tab of your application again", env)
	}
	api, base, err := gateway.APIBase(cfg.APIURL, DefaultAPIURL)
	if err != nil {
		return nil, fmt.Errorf("discord: %w", err)
	}
	client := &http.Client{Timeout: 30 * time.Second}
	if api != DefaultAPIURL {
		client.Transport = &rebase{base: base, next: http.DefaultTransport}
	}
	c := &Channel{
		name:    name,
		token:   "Bot " + token,
		client:  client,
		backoff: time.Second,
		seen:    newSeenChats(),
	}
	c.rest = c.session()
	return c, nil
}

// session returns a discordgo session with the channel's token, client
// and intents; discordgo retries 429s itself (sleeping Retry-After).
func (c *Channel) session() *discordgo.Session {
	s, _ := discordgo.New(c.token) // New fails only for email logins.
	s.Client = c.client
	s.Identify.Intents = Intents
	s.SyncEvents = true
	s.ShouldReconnectOnError = false // Receive reconnects itself.
	s.StateEnabled = false
	return s
}

// rebase sends requests addressed to discord.com to another base URL.
type rebase struct {
	base *url.URL
	next http.RoundTripper
}

// RoundTrip rewrites a discord.com request to the base and sends it.
func (r *rebase) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL.Host != "discord.com" {
		return r.next.RoundTrip(req)
	}
	req = req.Clone(req.Context())
	req.URL.Scheme = r.base.Scheme
	req.URL.Host = r.base.Host
	req.URL.Path = strings.TrimRight(r.base.Path, "/") + req.URL.Path
	req.URL.RawPath = ""
	req.Host = r.base.Host
	return r.next.RoundTrip(req)
}
