package postgres

import (
	"net/url"
	"os"
	"strings"
	"testing"
	"time"
)

const secret = "S3cret-pw-XYZZY"

// Open fails at once when it cannot use the database, naming where it
// tried and what to check, and never printing the password.
func TestOpenErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		url  string
		want []string // in the message
	}{
		{"refused", "postgres://rein:" + secret + "@127.0.0.1:1/rein?sslmode=disable",
			[]string{"127.0.0.1:1", "cannot reach the server", "user rein, database rein"}},
		{"refused, key=value", "host=127.0.0.1 port=1 user=rein password=" + secret + " dbname=rein sslmode=disable",
			[]string{"127.0.0.1:1", "cannot reach the server"}},
		{"does not parse", "postgres://rein:" + secret + "@127.0.0.1:notaport/rein",
			[]string{"does not parse"}},
		{"ipv6", "postgres://rein:" + secret + "@[::1]:1/rein?sslmode=disable&connect_timeout=2",
			[]string{"[::1]:1"}},
	}
	// With a test database, the server's own refusals too.
	if base := os.Getenv(envURL); strings.HasPrefix(base, "postgres") {
		u, err := url.Parse(base)
		if err != nil {
			t.Fatal(err)
		}
		where := u.Host
		badUser := *u
		badUser.User = url.UserPassword("rein_no_such_role", secret)
		badDB := *u
		badDB.Path = "/rein_no_such_database"
		tests = append(tests,
			struct {
				name string
				url  string
				want []string
			}{"unknown role", badUser.String(), []string{where, `refused user "rein_no_such_role"`, "check the user and password"}},
			struct {
				name string
				url  string
				want []string
			}{"unknown database", badDB.String(), []string{where, `database "rein_no_such_database" does not exist`}},
			struct {
				name string
				url  string
				want []string
			}{"unknown schema", withParams(t, base, "search_path", "rein_no_such_schema"), []string{where, "search_path names no schema"}},
		)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			st, err := Open(ctx, tt.url, Options{ConnectTimeout: 2 * time.Second})
			if err == nil {
				st.Close()
				t.Fatal("Open succeeded")
			}
			msg := err.Error()
			t.Log(msg)
			if strings.Contains(msg, secret) {
				t.Errorf("the message shows the password: %s", msg)
			}
			for _, w := range tt.want {
				if !strings.Contains(msg, w) {
					t.Errorf("message %q; want it to say %q", msg, w)
				}
			}
		})
	}
}

// An unroutable host fails after the connect timeout, not the operating
// system's minutes.
func TestOpenTimeout(t *testing.T) {
	t.Parallel()
	u := "postgres://rein:" + secret + "@10.255.255.1:5432/rein?sslmode=disable"
	_, err := Open(ctx, u, Options{ConnectTimeout: 200 * time.Millisecond})
	if err == nil || !strings.Contains(err.Error(), "10.255.255.1:5432") || strings.Contains(err.Error(), secret) {
		t.Errorf("Open of an unroutable host: %v; want an error naming 10.255.255.1:5432, without the password", err)
	}
}
