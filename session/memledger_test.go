package session_test

import (
	"testing"

	"github.com/reinhq/rein/session"
	"github.com/reinhq/rein/session/sessiontest"
)

func TestMemLedger(t *testing.T) {
	sessiontest.RunLedger(t, func(*testing.T) session.Ledger { return session.NewMemLedger() })
}
