package console

import (
	"fmt"
	"net/http"
)

// CSRFHeader is the header a write made with the console's cookie carries
// its session's CSRF token in. A page of another origin cannot read the
// token (it is answered only to the console's own same-origin requests),
// and cannot send a custom header cross-origin without a CORS preflight
// the server does not grant.
const CSRFHeader = "X-Rein-CSRF"

// CheckCSRF checks the CSRF token of a write made with s's cookie: r must
// carry it, once, in CSRFHeader.
func (s Session) CheckCSRF(r *http.Request) error {
	vs := r.Header.Values(CSRFHeader)
	switch {
	case len(vs) == 0:
		return fmt.Errorf("%w: a write made with the console's sign-in cookie needs its CSRF token in the %s header "+
			"(the console sends it; other clients send Authorization: Bearer instead of the cookie)", ErrInvalid, CSRFHeader)
	case len(vs) > 1:
		return fmt.Errorf("%w: the %s header came %d times: send it once", ErrInvalid, CSRFHeader, len(vs))
	case !constantEqual(vs[0], s.CSRF):
		return fmt.Errorf("%w: the %s header does not match this sign-in's CSRF token: reload the console", ErrInvalid, CSRFHeader)
	}
	return nil
}
