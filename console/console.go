package console

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"sync"
	"time"
)

// Defaults of [Options].
const (
	DefaultLinkTTL    = 15 * time.Minute
	DefaultSessionTTL = 12 * time.Hour
	DefaultMaxLinks   = 16
	DefaultMaxSignIns = 256
)

// Options configures a [Console]; zero fields take the defaults.
type Options struct {
	// LinkTTL is how long a login link may be redeemed (default 15m).
	LinkTTL time.Duration
	// SessionTTL is how long a signed-in browser stays signed in (default
	// 12h; a sign-in made with a token ends when the token does, if
	// earlier).
	SessionTTL time.Duration
	// MaxLinks bounds the links waiting to be redeemed (default 16): the
	// oldest goes when another is issued.
	MaxLinks int
	// MaxSignIns bounds the signed-in browsers (default 256): the oldest
	// is signed out when another signs in.
	MaxSignIns int
	// Now is the clock (default time.Now).
	Now func() time.Time
}

// Console holds the sign-in state of one server process. It is safe for
// concurrent use.
type Console struct {
	opts   Options
	cookie string // the cookie's name, unique to this process

	mu      sync.Mutex
	links   []link               // unredeemed login links, oldest first
	signIns map[[32]byte]*signIn // by the SHA-256 of the cookie value
	order   [][32]byte           // sign-ins, oldest first (for MaxSignIns)
}

// New returns a console with no links and nobody signed in.
func New(o Options) *Console {
	if o.LinkTTL <= 0 {
		o.LinkTTL = DefaultLinkTTL
	}
	if o.SessionTTL <= 0 {
		o.SessionTTL = DefaultSessionTTL
	}
	if o.MaxLinks <= 0 {
		o.MaxLinks = DefaultMaxLinks
	}
	if o.MaxSignIns <= 0 {
		o.MaxSignIns = DefaultMaxSignIns
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	var id [6]byte
	mustRead(id[:])
	return &Console{opts: o, cookie: "rein_console_" + hex.EncodeToString(id[:]), signIns: map[[32]byte]*signIn{}}
}

// CookieName is the name of this process's session cookie.
func (c *Console) CookieName() string { return c.cookie }

// ErrInvalid is the error of a login token, cookie or CSRF token that is
// not (or no longer) valid; the wrapped message says which and what to do.
var ErrInvalid = errors.New("console: invalid credential")

// secret returns 256 random bits, URL-safe base64 encoded (43 characters).
func secret() string {
	var b [32]byte
	mustRead(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// digest is what is kept of a secret: its SHA-256, so the memory of the
// process never holds a redeemable value and comparisons run on digests.
func digest(s string) [32]byte { return sha256.Sum256([]byte(s)) }

func mustRead(b []byte) {
	_, _ = rand.Read(b) // crypto/rand never fails
}
