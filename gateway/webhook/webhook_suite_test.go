package webhook_test

import (
	"testing"

	"github.com/reinhq/rein/gateway"
	"github.com/reinhq/rein/gateway/gatewaytest"
	"github.com/reinhq/rein/gateway/webhook"
	"github.com/reinhq/rein/gateway/webhook/webhookfake"
)

// GW-2, PERM-3: the channel suite, with a receiver that renders buttons
// and with one that answers by reply command.
func TestChannelConformance(t *testing.T) {
	for _, buttons := range []bool{true, false} {
		t.Run(map[bool]string{true: "buttons", false: "reply commands"}[buttons], func(t *testing.T) {
			gatewaytest.RunChannel(t, func(t *testing.T) (gatewaytest.Platform, func() gateway.Channel) {
				p := webhookfake.New(t)
				return p, func() gateway.Channel {
					ch, err := webhook.New("hook", webhook.Config{CallbackURL: p.URL(), Buttons: buttons},
						func(string) string { return webhookfake.Secret })
					if err != nil {
						t.Fatal(err)
					}
					return ch
				}
			})
		})
	}
}
