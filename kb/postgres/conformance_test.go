package postgres

import (
	"testing"

	"github.com/reinhq/rein/kb"
	"github.com/reinhq/rein/kb/kbtest"
	"github.com/reinhq/rein/session/postgres/pgtest"
)

func TestConformance(t *testing.T) {
	kbtest.Run(t, func(t *testing.T) kb.Backend {
		u, _ := pgtest.Schema(t)
		s, err := Open(ctx, u, Options{Namespace: "conformance"})
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}
