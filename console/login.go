package console

import (
	"crypto/subtle"
	"errors"
	"fmt"
	"strings"
	"time"
)

// link is an unredeemed login link: the digest of its token, the caller it
// signs in and until when.
type link struct {
	digest  [32]byte
	caller  string
	expires time.Time
	// until is when the credential the link was made from ends (a token's
	// exp); zero when it does not.
	until time.Time
}

// maxTokenLen bounds a presented login token: a longer one is refused
// before it is hashed.
const maxTokenLen = 128

// IssueLink makes a one-time login token that signs caller in (SPEC
// API-10): 256 random bits, redeemable once within the link lifetime. until,
// when not zero, is when the credential the caller proved itself with ends:
// neither the link nor the sign-in outlives it. Only the token's digest is
// kept. The oldest pending link goes when MaxLinks are pending.
func (c *Console) IssueLink(caller string, until time.Time) (token string, expires time.Time, err error) {
	if caller == "" {
		return "", time.Time{}, errors.New("console: a login link needs a caller")
	}
	now := c.opts.Now()
	expires = now.Add(c.opts.LinkTTL)
	if !until.IsZero() {
		if !until.After(now) {
			return "", time.Time{}, fmt.Errorf("%w: the credential this link would be made from has expired", ErrInvalid)
		}
		if until.Before(expires) {
			expires = until
		}
	}
	token = secret()
	c.mu.Lock()
	defer c.mu.Unlock()
	c.pruneLinks(now)
	if len(c.links) >= c.opts.MaxLinks {
		c.links = c.links[1:]
	}
	c.links = append(c.links, link{digest: digest(token), caller: caller, expires: expires, until: until})
	return token, expires, nil
}

// Redeem takes a login token and returns the caller it signs in and until
// when that caller's credential holds (zero: no limit but the session's).
// A token is redeemed once: the link is gone whether or not it had
// expired. Every pending link is compared, in constant time, so the time
// taken says nothing of how close a guess came.
func (c *Console) Redeem(token string) (caller string, until time.Time, err error) {
	token = strings.TrimSpace(token)
	if token == "" || len(token) > maxTokenLen {
		return "", time.Time{}, fmt.Errorf("%w: no login token, or not one rein made: open the login link rein serve printed, "+
			"or make a new one (POST /console/links, or Sign in another browser in a signed-in console)", ErrInvalid)
	}
	d := digest(token)
	now := c.opts.Now()
	c.mu.Lock()
	defer c.mu.Unlock()
	found := -1
	for i := range c.links {
		if subtle.ConstantTimeCompare(c.links[i].digest[:], d[:]) == 1 {
			found = i
		}
	}
	if found < 0 {
		c.pruneLinks(now)
		return "", time.Time{}, fmt.Errorf("%w: this login link is unknown or was already used (each link signs in one browser once, "+
			"and a restart forgets them): make a new one with POST /console/links or from a signed-in console", ErrInvalid)
	}
	l := c.links[found]
	c.links = append(c.links[:found:found], c.links[found+1:]...)
	c.pruneLinks(now)
	if !now.Before(l.expires) {
		return "", time.Time{}, fmt.Errorf("%w: this login link expired at %s: make a new one with POST /console/links", ErrInvalid,
			l.expires.UTC().Format(time.RFC3339))
	}
	return l.caller, l.until, nil
}

// pruneLinks drops expired links; c.mu is held.
func (c *Console) pruneLinks(now time.Time) {
	kept := c.links[:0]
	for _, l := range c.links {
		if now.Before(l.expires) {
			kept = append(kept, l)
		}
	}
	clear(c.links[len(kept):])
	c.links = kept
}
