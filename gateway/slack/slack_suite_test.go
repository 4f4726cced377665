package slack_test

import (
	"testing"

	"github.com/reinhq/rein/gateway"
	"github.com/reinhq/rein/gateway/gatewaytest"
	"github.com/reinhq/rein/gateway/slack"
	"github.com/reinhq/rein/gateway/slack/slackfake"
)

// GW-2, PERM-3: the channel suite against the fake Slack; every
// constructor call is a restarted gateway's new channel.
func TestChannelConformance(t *testing.T) {
	gatewaytest.RunChannel(t, func(t *testing.T) (gatewaytest.Platform, func() gateway.Channel) {
		p := slackfake.New(t)
		return p, func() gateway.Channel {
			ch, err := slack.New("slack", slack.Config{APIURL: p.URL()}, p.Getenv)
			if err != nil {
				t.Fatal(err)
			}
			return ch
		}
	})
}
