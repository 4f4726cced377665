package telemetry

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Credential-shaped test values (none is a real credential).
const (
	anthropicKey = "sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789"
	openaiKey    = "sk-proj-AbCdEfGhIjKlMnOpQrSt"
	googleKey    = "AIzaSyA1b2C3d4E5f6G7h8I9j0KlMnOpQrStUv"
	githubToken  = "ghp_AbCdEfGhIjKlMnOpQrStUvWxYz0123"
	slackToken   = "xoxb-1234567890-abcdefghij"
	jwt          = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dBjftJeZ4CVPmB92K27uhbUJU1p1r_wW1gFWFOEjXk"
	pemKey       = "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA\nabcdef\n-----END RSA PRIVATE KEY-----"
)

// logged runs log with a JSON logger and returns the record decoded,
// without time and level.
func logged(t *testing.T, log func(*slog.Logger)) map[string]any {
	t.Helper()
	var buf bytes.Buffer
	log(NewLogger(&buf, LogOptions{JSON: true, Level: "debug"}))
	var m map[string]any
	if err := json.Unmarshal(buf.Bytes(), &m); err != nil {
		t.Fatalf("decode %q: %v", buf.String(), err)
	}
	delete(m, "time")
	delete(m, "level")
	return m
}

type secretValuer struct{}

func (secretValuer) LogValue() slog.Value { return slog.StringValue("key is " + openaiKey) }

type credentials struct {
	User     string `json:"user"`
	Password string `json:"password"`
}

type plain struct {
	Name string `json:"name"`
}

func TestRedactingHandler(t *testing.T) {
	tests := []struct {
		name string
		log  func(*slog.Logger)
		want map[string]any
	}{{
		name: "secret keys",
		log: func(l *slog.Logger) {
			l.Info("m", "authorization", "Basic dXNlcjpwYXNz", "API_KEY", "k1", "apiKey", "k2", "X-Api-Key", "k3",
				"password", "p", "Cookie", "c", "clientSecret", "s", "GITHUB_TOKEN", "t", "refresh_token", 7)
		},
		want: map[string]any{"msg": "m", "authorization": Redacted, "API_KEY": Redacted, "apiKey": Redacted,
			"X-Api-Key": Redacted, "password": Redacted, "Cookie": Redacted, "clientSecret": Redacted,
			"GITHUB_TOKEN": Redacted, "refresh_token": Redacted},
	}, {
		name: "stable keys and harmless values pass",
		log: func(l *slog.Logger) {
			l.Info("tool done", KeySessionID, "s1", KeyRunID, "r1", KeyTurn, 3, KeyTool, "bash", KeyCaller, "alice",
				"max_tokens", 100, "keyboard", "qwerty", "note", "the bearer of good news", "task", "task-list-with-sk")
		},
		want: map[string]any{"msg": "tool done", "session_id": "s1", "run_id": "r1", "turn": 3.0, "tool": "bash",
			"caller": "alice", "max_tokens": 100.0, "keyboard": "qwerty", "note": "the bearer of good news",
			"task": "task-list-with-sk"},
	}, {
		name: "credential shapes in values",
		log: func(l *slog.Logger) {
			l.Info("m", "a", "key "+anthropicKey+" used", "b", openaiKey, "c", googleKey, "d", "x="+githubToken,
				"e", slackToken, "f", "token="+jwt+";", "g", "Authorization: Bearer abcdefghijklmnop", "h", "pem:\n"+pemKey+"\nend",
				"i", "postgres://rein:hunter2@db:5432/rein", "j", "-----BEGIN PRIVATE KEY-----\nMIIEvQ cut off")
		},
		want: map[string]any{"msg": "m", "a": "key [REDACTED] used", "b": Redacted, "c": Redacted, "d": "x=" + Redacted,
			"e": Redacted, "f": "token=" + Redacted + ";", "g": "Authorization: " + Redacted, "h": "pem:\n" + Redacted + "\nend",
			"i": "postgres://rein:" + Redacted + "@db:5432/rein", "j": Redacted},
	}, {
		name: "message",
		log:  func(l *slog.Logger) { l.Warn("calling with " + openaiKey + " and " + jwt) },
		want: map[string]any{"msg": "calling with " + Redacted + " and " + Redacted},
	}, {
		name: "nested groups",
		log: func(l *slog.Logger) {
			l.Info("req", slog.Group("http",
				slog.String("method", "GET"),
				slog.Group("headers", slog.String("Authorization", "Bearer abcdefghijklmnop"), slog.String("Accept", "text/plain"),
					slog.String("X-Note", "see "+githubToken)),
				slog.Group("credentials", slog.String("user", "bob"))))
		},
		want: map[string]any{"msg": "req", "http": map[string]any{
			"method":      "GET",
			"headers":     map[string]any{"Authorization": Redacted, "Accept": "text/plain", "X-Note": "see " + Redacted},
			"credentials": Redacted,
		}},
	}, {
		name: "logger groups and attrs",
		log: func(l *slog.Logger) {
			l.With("api_key", "k", KeySessionID, "s1").WithGroup("req").With("note", "Bearer abcdefghijklmnop").
				WithGroup("Credentials").Info("m", "user", "bob")
		},
		want: map[string]any{"msg": "m", "api_key": Redacted, "session_id": "s1",
			"req": map[string]any{"note": Redacted, "Credentials": map[string]any{"user": Redacted}}},
	}, {
		name: "inline group",
		log: func(l *slog.Logger) {
			l.Info("m", slog.Group("", slog.String("token", "t"), slog.String("x", openaiKey)))
		},
		want: map[string]any{"msg": "m", "token": Redacted, "x": Redacted},
	}, {
		name: "other kinds",
		log: func(l *slog.Logger) {
			l.Info("m", "err", fmt.Errorf("call: %w", errors.New("401 for "+openaiKey)), "valuer", secretValuer{},
				"struct", credentials{User: "bob", Password: "pw"}, "map", map[string]string{"Token": "t", "x": "y"},
				"raw", json.RawMessage(`{"secret":"s","n":1}`), "bytes", []byte("Bearer abcdefghijklmnop"),
				"harmless", plain{Name: "n"}, "ok", true, "n", 1.5)
		},
		want: map[string]any{"msg": "m", "err": "call: 401 for " + Redacted, "valuer": "key is " + Redacted,
			"struct": map[string]any{"user": "bob", "password": Redacted}, "map": map[string]any{"Token": Redacted, "x": "y"},
			"raw": map[string]any{"secret": Redacted, "n": 1.0}, "bytes": Redacted,
			"harmless": map[string]any{"name": "n"}, "ok": true, "n": 1.5},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, logged(t, tt.log)); diff != "" {
				t.Errorf("record (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSecretKey(t *testing.T) {
	tests := map[string]bool{
		"token": true, "Authorization": true, "api_key": true, "apikey": true, "APIKey": true, "apiKey": true,
		"x-api-key": true, "Set-Cookie": true, "password": true, "db.password": true, "dbpassword": true,
		"clientSecret": true, "GITHUB_TOKEN": true, "private_key": true, "accessToken": true, "jwt": true,
		"session_id": false, "run_id": false, "turn": false, "tool": false, "caller": false, "max_tokens": false,
		"input_tokens": false, "keyboard": false, "author": false, "monkey": false, "": false, "tokens": false,
		strings.Repeat("long_", 20) + "token": true, strings.Repeat("long_", 20) + "name": false,
	}
	for k, want := range tests {
		if got := SecretKey(k); got != want {
			t.Errorf("SecretKey(%q) = %v, want %v", k, got, want)
		}
	}
}

func TestMask(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", ""},
		{"nothing to see", "nothing to see"},
		{"sk-short", "sk-short"},
		{"use " + anthropicKey, "use " + Redacted},
		{"a " + googleKey + " b " + githubToken, "a " + Redacted + " b " + Redacted},
		{"AKIAABCDEFGHIJKLMNOP", Redacted},
		{"github_pat_11ABCDEFG0123456789_abcdefghij", Redacted},
		{"bearer abc.def-ghi_jkl", Redacted},
		{"https://user:pa55@example.com/x and https://example.com/y", "https://user:" + Redacted + "@example.com/x and https://example.com/y"},
		{"mailto me@example.com at https://example.com", "mailto me@example.com at https://example.com"},
		{"eyJ only", "eyJ only"},
	}
	for _, tt := range tests {
		if got := Mask(tt.in); got != tt.want {
			t.Errorf("Mask(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// FuzzMask checks that the cheap pre-check never lets a credential
// through: whatever a pattern matches, mayHoldSecret must flag, and Mask's
// output holds no match.
func FuzzMask(f *testing.F) {
	for _, s := range []string{anthropicKey, googleKey, githubToken, slackToken, jwt, pemKey,
		"Bearer abcdefghijklmnop", "postgres://u:p@h/db", "AKIAABCDEFGHIJKLMNOP", "plain text"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if (secretText().MatchString(s) || urlPassword().MatchString(s)) && !mayHoldSecret(s) {
			t.Fatalf("mayHoldSecret(%q) = false, but a pattern matches", s)
		}
		m := Mask(s)
		if loc := secretText().FindStringIndex(m); loc != nil {
			t.Fatalf("Mask(%q) = %q still holds %q", s, m, m[loc[0]:loc[1]])
		}
	})
}

func TestNewLogger(t *testing.T) {
	var buf bytes.Buffer
	l := NewLogger(&buf, LogOptions{Level: "WARN"})
	l.Info("hidden")
	l.Warn("shown", "token", "t")
	if got, want := strings.TrimSpace(buf.String()), "level=WARN msg=shown token="+Redacted; !strings.HasSuffix(got, want) || strings.Contains(got, "hidden") {
		t.Errorf("text log = %q, want a line ending %q", got, want)
	}

	buf.Reset()
	l = NewLogger(&buf, LogOptions{JSON: true, Level: "loud"})
	l.Debug("hidden")
	l.Info("shown")
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], `"level":"WARN"`) || !strings.Contains(lines[0], `loud`) || !strings.Contains(lines[1], `"msg":"shown"`) {
		t.Errorf("unknown level: log = %q, want a warning naming it, then the info record", buf.String())
	}
}

func TestParseLevel(t *testing.T) {
	tests := []struct {
		in      string
		want    slog.Level
		wantErr bool
	}{
		{"", slog.LevelInfo, false}, {"debug", slog.LevelDebug, false}, {"INFO", slog.LevelInfo, false},
		{"warn", slog.LevelWarn, false}, {"Warning", slog.LevelWarn, false}, {"error", slog.LevelError, false},
		{"info+2", slog.LevelInfo + 2, false}, {"verbose", slog.LevelInfo, true},
	}
	for _, tt := range tests {
		got, err := ParseLevel(tt.in)
		if got != tt.want || (err != nil) != tt.wantErr {
			t.Errorf("ParseLevel(%q) = %v, %v; want %v, error %v", tt.in, got, err, tt.want, tt.wantErr)
		}
	}
}

// BenchmarkRedactingJSON logs a typical record of the runner (stable keys,
// a duration, a short output) through the redacting JSON handler, next to
// the bare JSON handler, and a record holding a credential.
func BenchmarkRedactingJSON(b *testing.B) {
	record := func(l *slog.Logger, output string) {
		l.Info("tool finished", KeySessionID, "01JABCDEFGHJKMNPQRSTVWXYZ0", KeyRunID, "01JABCDEFGHJKMNPQRSTVWXYZ1",
			KeyTurn, 3, KeyTool, "bash", "duration_ms", 412, "output", output)
	}
	const clean = "go test ./... ok github.com/reinhq/rein/telemetry 0.412s"
	b.Run("bare", func(b *testing.B) {
		l := slog.New(slog.NewJSONHandler(discard{}, nil))
		b.ReportAllocs()
		for b.Loop() {
			record(l, clean)
		}
	})
	b.Run("redacting", func(b *testing.B) {
		l := NewLogger(discard{}, LogOptions{JSON: true})
		b.ReportAllocs()
		for b.Loop() {
			record(l, clean)
		}
	})
	b.Run("redacting-secret", func(b *testing.B) {
		l := NewLogger(discard{}, LogOptions{JSON: true})
		b.ReportAllocs()
		for b.Loop() {
			record(l, "curl -H 'Authorization: Bearer "+openaiKey+"' https://api.example.com")
		}
	})
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }
