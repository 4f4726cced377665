// Package pgtest gives tests a PostgreSQL schema of their own on the
// database $REIN_TEST_POSTGRES_URL names (CI always sets it), dropped when
// the test ends, so tests run in parallel and leave nothing behind. A test
// skips, saying how to set the variable, when it is not set.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
)

// EnvURL names the variable that points the tests at a database.
const EnvURL = "REIN_TEST_POSTGRES_URL"

// BaseURL returns the test database's URL, or skips the test when none is
// set.
func BaseURL(t testing.TB) string {
	t.Helper()
	u := os.Getenv(EnvURL)
	if u == "" {
		t.Skip(EnvURL + " is not set: to run the PostgreSQL tests, point it at a database they may create schemas in, " +
			"e.g. " + EnvURL + "=postgres://postgres@127.0.0.1:5432/test?sslmode=disable")
	}
	return u
}

// WithParams returns connString with the settings added, whether it is a
// URL or key=value settings.
func WithParams(t testing.TB, connString string, kv ...string) string {
	t.Helper()
	if strings.HasPrefix(connString, "postgres://") || strings.HasPrefix(connString, "postgresql://") {
		u, err := url.Parse(connString)
		if err != nil {
			t.Fatalf("%s: %v", EnvURL, err)
		}
		q := u.Query()
		for i := 0; i+1 < len(kv); i += 2 {
			q.Set(kv[i], kv[i+1])
		}
		u.RawQuery = q.Encode()
		return u.String()
	}
	for i := 0; i+1 < len(kv); i += 2 {
		connString += " " + kv[i] + "=" + kv[i+1]
	}
	return connString
}

// Schema creates an empty schema, dropped with everything in it when
// the test ends, and returns the URL whose search_path is that schema and
// the schema's name. Each test has its own, so tests run in parallel and
// leave nothing behind.
func Schema(t testing.TB) (string, string) {
	t.Helper()
	base := BaseURL(t)
	var r [6]byte
	_, _ = rand.Read(r[:])
	schema := "rein_test_" + hex.EncodeToString(r[:])
	admin, err := pgx.Connect(context.Background(), base)
	if err != nil {
		t.Fatalf("connect to the test database (%s): %v", EnvURL, err)
	}
	defer admin.Close(context.Background())
	if _, err := admin.Exec(context.Background(), "CREATE SCHEMA "+schema); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		c, err := pgx.Connect(context.Background(), base)
		if err != nil {
			t.Errorf("drop schema %s: %v", schema, err)
			return
		}
		defer c.Close(context.Background())
		if _, err := c.Exec(context.Background(), "DROP SCHEMA "+schema+" CASCADE"); err != nil {
			t.Errorf("drop schema %s: %v", schema, err)
		}
	})
	return WithParams(t, base, "search_path", schema), schema
}
