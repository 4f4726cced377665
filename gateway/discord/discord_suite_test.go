package discord

import (
	"testing"
	"time"

	"github.com/reinhq/rein/gateway"
	"github.com/reinhq/rein/gateway/discord/discordfake"
	"github.com/reinhq/rein/gateway/gatewaytest"
)

func TestChannelConformance(t *testing.T) {
	gatewaytest.RunChannel(t, func(t *testing.T) (gatewaytest.Platform, func() gateway.Channel) {
		p := discordfake.New(t)
		return p, func() gateway.Channel {
			c, err := New("discord", Config{APIURL: p.URL()}, p.Env())
			if err != nil {
				t.Fatalf("New: %v", err)
			}
			c.backoff = 10 * time.Millisecond
			return c
		}
	})
}
