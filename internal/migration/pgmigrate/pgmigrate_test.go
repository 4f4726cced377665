package pgmigrate

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/reinhq/rein/internal/migration"
	"github.com/reinhq/rein/session/postgres/pgtest"
)

var ctx = context.Background()

func TestApply(t *testing.T) {
	u, _ := pgtest.Schema(t)
	c, err := pgx.Connect(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	ms := []migration.Migration{
		{Version: 1, Name: "0001_a", SQL: "CREATE TABLE a (x integer);"},
		{Version: 2, Name: "0002_b", SQL: "CREATE TABLE b (x integer);"},
	}
	p := Plan{Table: "test_migrations", Lock: 42}
	for _, bad := range []string{"", "x; DROP TABLE a", "Upper", "a b", strings.Repeat("x", 64)} {
		if _, err := Apply(ctx, c, Plan{Table: bad, Lock: 1}, ms, time.Now()); err == nil {
			t.Errorf("table %q: no error", bad)
		}
	}
	if _, err := Apply(ctx, c, p, nil, time.Now()); err == nil {
		t.Error("no migrations: no error")
	}
	if v, err := Apply(ctx, c, p, ms[:1], time.Now()); err != nil || v != 1 {
		t.Fatalf("Apply 1: %d, %v", v, err)
	}
	if v, err := Apply(ctx, c, p, ms, time.Now()); err != nil || v != 2 {
		t.Fatalf("Apply 2: %d, %v", v, err)
	}
	// Another plan's table starts from scratch: its migrations are its own.
	other := []migration.Migration{{Version: 1, Name: "0001_c", SQL: "CREATE TABLE c (x integer);"}}
	if v, err := Apply(ctx, c, Plan{Table: "other_migrations", Lock: 43}, other, time.Now()); err != nil || v != 1 {
		t.Fatalf("Apply of another plan: %d, %v", v, err)
	}
	_, err = Apply(ctx, c, p, ms[:1], time.Now())
	var newer *NewerError
	if !errors.As(err, &newer) || newer.Database != 2 || newer.Known != 1 ||
		!strings.Contains(err.Error(), "version 2 is newer than this rein (1)") {
		t.Errorf("Apply with fewer migrations than applied: %v, want a *NewerError 2 > 1", err)
	}
}
