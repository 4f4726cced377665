package telegram

import (
	"testing"
	"time"

	"github.com/reinhq/rein/gateway"
	"github.com/reinhq/rein/gateway/gatewaytest"
	"github.com/reinhq/rein/gateway/telegram/telegramfake"
)

func TestChannelConformance(t *testing.T) {
	gatewaytest.RunChannel(t, func(t *testing.T) (gatewaytest.Platform, func() gateway.Channel) {
		p := telegramfake.New(t)
		return p, func() gateway.Channel {
			c, err := New("telegram", Config{APIURL: p.URL(), PollTimeout: time.Second}, fakeEnv)
			if err != nil {
				t.Fatalf("New: %v", err)
			}
			c.backoff = 10 * time.Millisecond
			return c
		}
	})
}
