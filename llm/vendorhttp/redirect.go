package vendorhttp

import (
	"fmt"
	"net/http"
)

// GuardRedirects returns a copy of c (http.DefaultClient when nil) that
// refuses to follow a redirect to another scheme or host, port included.
// The vendors' APIs do not redirect their calls; a proxy or an endpoint
// that does would receive the request's credentials along with it, since
// net/http drops only Authorization and cookies on a redirect to another
// domain, never x-api-key or x-goog-api-key, and not at all for another
// port of the same host. The refusal is a transport error of KindUnknown:
// it is not retried. Redirects within the host follow c's own policy.
func GuardRedirects(c *http.Client) *http.Client {
	if c == nil {
		c = http.DefaultClient
	}
	g := *c
	next := c.CheckRedirect
	g.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		first := via[0].URL
		if req.URL.Scheme != first.Scheme || req.URL.Host != first.Host {
			return fmt.Errorf("redirect from %s://%s to %s://%s refused: credentials are not sent to another host",
				first.Scheme, first.Host, req.URL.Scheme, req.URL.Host)
		}
		if next != nil {
			return next(req, via)
		}
		if len(via) >= 10 {
			return fmt.Errorf("stopped after %d redirects", len(via))
		}
		return nil
	}
	return &g
}
