package console

import (
	"crypto/subtle"
	"fmt"
	"net/http"
	"slices"
	"time"
)

// signIn is a signed-in browser.
type signIn struct {
	caller  string
	expires time.Time
	csrf    string
}

// Session is the sign-in a request's cookie names.
type Session struct {
	// Caller is the caller the browser acts as.
	Caller string
	// Expires is when the sign-in ends.
	Expires time.Time
	// CSRF is the token writes made with the cookie must carry in the
	// CSRFHeader header.
	CSRF string
}

// SignIn signs a browser in as caller: it makes a session whose cookie it
// sets on w and returns the session. The cookie value is new random bits
// (never the login token it may have been redeemed from); it is HttpOnly,
// SameSite=Strict, Path=/, Secure on a TLS connection (r.TLS), and lasts
// the session lifetime or until the caller's credential ends (until, when
// not zero), whichever comes first. The oldest sign-in goes when MaxSignIns
// are held.
func (c *Console) SignIn(w http.ResponseWriter, r *http.Request, caller string, until time.Time) (Session, error) {
	now := c.opts.Now()
	expires := now.Add(c.opts.SessionTTL)
	if !until.IsZero() && until.Before(expires) {
		expires = until
	}
	if !expires.After(now) {
		return Session{}, fmt.Errorf("%w: the credential to sign in with has expired: get a new one", ErrInvalid)
	}
	value := secret()
	s := &signIn{caller: caller, expires: expires, csrf: secret()}
	d := digest(value)
	c.mu.Lock()
	c.pruneSignIns(now)
	for len(c.order) >= c.opts.MaxSignIns {
		delete(c.signIns, c.order[0])
		c.order = c.order[1:]
	}
	c.signIns[d] = s
	c.order = append(c.order, d)
	c.mu.Unlock()
	http.SetCookie(w, &http.Cookie{Name: c.cookie, Value: value, Path: "/", MaxAge: int(expires.Sub(now).Seconds()),
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil})
	return Session{Caller: caller, Expires: expires, CSRF: s.csrf}, nil
}

// Lookup returns the sign-in r's cookie names. present is false when r
// carries no cookie of this console; then err is nil. A cookie that names
// no live sign-in (unknown, expired, signed out, of an earlier process) is
// an error wrapping ErrInvalid: the request is refused, never served as
// some other caller.
func (c *Console) Lookup(r *http.Request) (s Session, present bool, err error) {
	var value string
	n := 0
	for _, ck := range r.CookiesNamed(c.cookie) {
		value = ck.Value
		n++
	}
	if n == 0 {
		return Session{}, false, nil
	}
	if n > 1 {
		return Session{}, true, fmt.Errorf("%w: the request carries the console's cookie %d times: sign out and in again", ErrInvalid, n)
	}
	if len(value) > maxTokenLen {
		return Session{}, true, fmt.Errorf("%w: the console cookie is not one this server set: sign in again", ErrInvalid)
	}
	d := digest(value)
	now := c.opts.Now()
	c.mu.Lock()
	defer c.mu.Unlock()
	si := c.signIns[d]
	if si == nil {
		return Session{}, true, fmt.Errorf("%w: the console sign-in is unknown or ended (signed out, or the server restarted): "+
			"open a new login link (rein serve prints one at start; POST /console/links makes another)", ErrInvalid)
	}
	if !now.Before(si.expires) {
		c.drop(d)
		return Session{}, true, fmt.Errorf("%w: the console sign-in expired at %s: sign in again", ErrInvalid, si.expires.UTC().Format(time.RFC3339))
	}
	return Session{Caller: si.caller, Expires: si.expires, CSRF: si.csrf}, true, nil
}

// SignOut ends the sign-in r's cookie names, if any, and clears the
// cookie on w.
func (c *Console) SignOut(w http.ResponseWriter, r *http.Request) {
	for _, ck := range r.CookiesNamed(c.cookie) {
		d := digest(ck.Value)
		c.mu.Lock()
		c.drop(d)
		c.mu.Unlock()
	}
	http.SetCookie(w, &http.Cookie{Name: c.cookie, Value: "", Path: "/", MaxAge: -1, HttpOnly: true,
		SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil})
}

// drop forgets a sign-in; c.mu is held.
func (c *Console) drop(d [32]byte) {
	delete(c.signIns, d)
	if i := slices.Index(c.order, d); i >= 0 {
		c.order = slices.Delete(c.order, i, i+1)
	}
}

// pruneSignIns drops expired sign-ins; c.mu is held.
func (c *Console) pruneSignIns(now time.Time) {
	kept := c.order[:0]
	for _, d := range c.order {
		if si := c.signIns[d]; si != nil && now.Before(si.expires) {
			kept = append(kept, d)
		} else {
			delete(c.signIns, d)
		}
	}
	c.order = kept
}

// constantEqual compares two secrets in constant time.
func constantEqual(a, b string) bool {
	return subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1
}
