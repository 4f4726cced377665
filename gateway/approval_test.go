package gateway_test

import (
	"strings"
	"testing"
	"time"

	"github.com/reinhq/rein/gateway"
	"github.com/reinhq/rein/gateway/gatewaytest"
)

// PERM-3, GW-2: a user can answer a permission question as soon as the
// platform shows it, before the platform's answer to the send reaches
// the gateway; the question is still edited into its outcome (it was
// left with its buttons: a flake of the channel suite's approval case).
func TestApprovalAnsweredBeforeItsSendReturned(t *testing.T) {
	release := make(chan struct{})
	g := &gate{match: func(kind string, m gateway.Outgoing) bool { return kind == "send" && strings.HasPrefix(m.Text, "🔐") },
		hold: 1, pass: true, until: release, held: make(chan struct{})}
	e := gatewaytest.Start(t, hook(0), gatewaytest.Options{Configure: func(cfg *gateway.Config) {
		g.Channel = cfg.Routes[0].Channel
		cfg.Routes[0].Channel = g
	}})
	e.P.Send(t, gatewaytest.Chat, gatewaytest.Owner, "please write a file")
	deadline := time.NewTimer(30 * time.Second) // a guard, not a wait
	defer deadline.Stop()
	select {
	case <-g.held:
	case <-deadline.C:
		t.Fatalf("the question was never sent; the chat: %+v", e.P.Messages(gatewaytest.Chat))
	}
	q := e.WaitText(t, gatewaytest.Chat, "🔐 Allow write_file")
	e.Answer(t, q, gatewaytest.Owner, "once") // handled: the platform got its 200
	close(release)                            // now the send's answer arrives
	e.WaitText(t, gatewaytest.Chat, "written")
	m := e.WaitText(t, gatewaytest.Chat, "✅ Allowed once by")
	if len(m.Buttons) != 0 {
		t.Errorf("the settled question still has buttons: %+v", m)
	}
}
