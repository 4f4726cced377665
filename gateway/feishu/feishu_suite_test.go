package feishu

import (
	"testing"

	"github.com/reinhq/rein/gateway"
	"github.com/reinhq/rein/gateway/feishu/feishufake"
	"github.com/reinhq/rein/gateway/gatewaytest"
)

func TestChannelConformance(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			gatewaytest.RunChannel(t, func(t *testing.T) (gatewaytest.Platform, func() gateway.Channel) {
				p := feishufake.New(t, m.opts...)
				return p, func() gateway.Channel {
					c, err := New("feishu", Config{AppID: feishufake.AppID, APIURL: p.URL()}, p.Getenv)
					if err != nil {
						t.Fatalf("New: %v", err)
					}
					return c
				}
			})
		})
	}
}
