// Package console is rein's web console (SPEC API-10): the embedded page,
// scripts and style sheet that `rein serve` serves at /, and the sign-in
// state behind it — one-time login links, the session cookie they turn
// into, and the CSRF token every write made with that cookie carries.
//
// The package knows nothing of the API: the server authenticates callers
// and decides which requests a cookie may make; this package keeps the
// secrets and answers whether a link, a cookie or a CSRF header is valid.
// Everything is held in memory: a restart signs every browser out.
//
// The secrets are separate and single-purpose: a login token (256 random
// bits, single-use, expiring, compared in constant time) is redeemed for a
// cookie value (256 other random bits, never the token) and a CSRF token
// (256 more), both bound to this process; the cookie is HttpOnly and
// SameSite=Strict, named with this process's id so two servers on one host
// never read or overwrite each other's.
package console
