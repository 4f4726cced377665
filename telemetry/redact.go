package telemetry

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strings"
	"sync"
	"unicode"
)

// Redacted replaces every secret value, in logs and span attributes.
const Redacted = "[REDACTED]"

// The word list and the token shapes follow permission.Redact (the audit
// log's redaction), which telemetry cannot import: it sits above tool and
// llm in the layout, and telemetry must stay importable by everything.
// Keep the two in step; the shapes here add JWTs, PEM private keys and
// passwords in URLs.

// secretWords are the words of a key name that mark its value secret.
var secretWords = map[string]bool{
	"token": true, "key": true, "secret": true, "password": true, "passwd": true, "pwd": true,
	"passphrase": true, "credential": true, "credentials": true, "authorization": true,
	"auth": true, "apikey": true, "cookie": true, "private": true, "bearer": true, "jwt": true,
}

// secretParts mark a key secret wherever they appear in it, lower-cased:
// "clientSecret", "dbpassword", "xapikey".
var secretParts = []string{"password", "passwd", "secret", "apikey"}

// secretText matches credential shapes inside any text: PEM private key
// blocks (to their end, or the end of the text when cut off), provider and
// forge tokens, JWTs and bearer credentials.
var secretText = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?s:-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----.*?(?:-----END [A-Z0-9 ]*PRIVATE KEY-----|\z))` +
		`|\b(?:sk-[A-Za-z0-9_-]{16,}|gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}|AKIA[0-9A-Z]{16}` +
		`|xox[abprs]-[A-Za-z0-9-]{10,}|AIza[0-9A-Za-z_-]{30,}|eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*)` +
		`|(?i:bearer\s+)[A-Za-z0-9._~+/=-]{12,}`)
})

// urlPassword matches the password of a URL's user information
// (postgres://user:PASSWORD@host); the scheme, user and @ are kept.
var urlPassword = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`([A-Za-z][A-Za-z0-9+.-]*://[^/\s:@]*:)[^/\s@]+@`) })

// Mask returns s with every credential-shaped part replaced by [Redacted]:
// Bearer credentials, sk-… (OpenAI, Anthropic), ghp_… and github_pat_…,
// AKIA…, AIza…, xox?-… (Slack), JWTs (eyJ….….…), PEM private key blocks,
// and the password of a URL (scheme://user:PASSWORD@host). Text without
// any of their markers is returned as is, without running a pattern.
func Mask(s string) string {
	if !mayHoldSecret(s) {
		return s
	}
	s = secretText().ReplaceAllLiteralString(s, Redacted)
	if strings.Contains(s, "://") {
		s = urlPassword().ReplaceAllString(s, "${1}"+Redacted+"@")
	}
	return s
}

// mayHoldSecret reports, in one pass over s, whether it holds a marker
// that one of Mask's patterns starts with. It never misses a match of
// them; it only spares the patterns the text that cannot match.
func mayHoldSecret(s string) bool {
	for i := 0; i < len(s); i++ {
		rest := s[i:]
		switch s[i] {
		case 's':
			if strings.HasPrefix(rest, "sk-") {
				return true
			}
		case 'g':
			if strings.HasPrefix(rest, "github_pat_") || len(rest) > 3 && rest[1] == 'h' && rest[3] == '_' {
				return true
			}
		case 'A':
			if strings.HasPrefix(rest, "AKIA") || strings.HasPrefix(rest, "AIza") {
				return true
			}
		case 'x':
			if strings.HasPrefix(rest, "xox") {
				return true
			}
		case 'e':
			if strings.HasPrefix(rest, "eyJ") {
				return true
			}
		case 'b', 'B':
			if len(rest) >= 6 && strings.EqualFold(rest[:6], "bearer") {
				return true
			}
		case '-':
			if strings.HasPrefix(rest, "-----BEGIN") {
				return true
			}
		case ':':
			if strings.HasPrefix(rest, "://") && strings.IndexByte(rest, '@') > 0 {
				return true
			}
		}
	}
	return false
}

// SecretKey reports whether a key names a secret, so that its value must
// never be shown: one of its words (split at snake, kebab, dotted and
// camel case) is token, key, secret, password, authorization, auth,
// apikey, cookie, credential(s), private, bearer, jwt, …; or it contains
// password, passwd, secret or apikey anywhere. "max_tokens", "session_id"
// and "keyboard" are not secrets; "apiKey", "X-Api-Key", "GITHUB_TOKEN",
// "Set-Cookie" and "clientsecret" are. It does not allocate.
func SecretKey(k string) bool {
	var buf [64]byte
	if len(k) <= len(buf) {
		low := lowerASCII(buf[:0], k)
		if secretWords[string(low)] {
			return true
		}
		for _, p := range secretParts {
			if bytes.Contains(low, []byte(p)) {
				return true
			}
		}
	} else if lk := strings.ToLower(k); secretWords[lk] || containsAny(lk, secretParts) {
		return true
	}
	found := false
	eachWord(k, func(w string) bool {
		if len(w) > len(buf) {
			return true
		}
		if secretWords[string(lowerASCII(buf[:0], w))] {
			found = true
			return false
		}
		return true
	})
	return found
}

// eachWord calls yield with each word of k, split at every character that
// is neither letter nor digit and before an upper-case letter that follows
// a lower-case one, until yield returns false.
func eachWord(k string, yield func(string) bool) {
	start := -1
	var prev rune
	for i, c := range k {
		switch {
		case !unicode.IsLetter(c) && !unicode.IsDigit(c):
			if start >= 0 && !yield(k[start:i]) {
				return
			}
			start = -1
		case unicode.IsUpper(c) && unicode.IsLower(prev) && start >= 0:
			if !yield(k[start:i]) {
				return
			}
			start = i
		case start < 0:
			start = i
		}
		prev = c
	}
	if start >= 0 {
		yield(k[start:])
	}
}

// lowerASCII appends s to dst with ASCII letters lower-cased and other
// runes as they are.
func lowerASCII(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		dst = append(dst, c)
	}
	return dst
}

func containsAny(s string, parts []string) bool {
	for _, p := range parts {
		if strings.Contains(s, p) {
			return true
		}
	}
	return false
}

// redactJSON returns the JSON document b with the values of secret keys
// replaced by [Redacted] and every string masked, and whether anything
// changed. A document that does not decode is masked as text.
func redactJSON(b []byte) ([]byte, bool) {
	var v any
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	if err := d.Decode(&v); err != nil || d.More() {
		m := Mask(string(b))
		return []byte(m), m != string(b)
	}
	v, changed := redactValue(v)
	if !changed {
		return b, false
	}
	out, err := json.Marshal(v)
	if err != nil {
		return []byte(`"` + Redacted + `"`), true
	}
	return out, true
}

// redactValue redacts a decoded JSON value in place and reports whether
// anything changed.
func redactValue(v any) (any, bool) {
	changed := false
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			if SecretKey(k) {
				v[k] = Redacted
				changed = true
				continue
			}
			var c bool
			if v[k], c = redactValue(x); c {
				changed = true
			}
		}
		return v, changed
	case []any:
		for i, x := range v {
			var c bool
			if v[i], c = redactValue(x); c {
				changed = true
			}
		}
		return v, changed
	case string:
		m := Mask(v)
		return m, m != v
	}
	return v, false
}
