package builtin

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"os"
	"syscall"
	"time"

	"github.com/reinhq/rein/tool"
)

// localOK marks a fetch whose URL named a local host itself.
type localOK struct{}

// checkDial refuses a connection to a local address unless the fetch's URL
// named one: a public name must not lead into this machine or a private
// network (DNS rebinding, a name that resolves to 127.0.0.1).
func checkDial(ctx context.Context, address string) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil || !tool.LocalAddr(ap.Addr()) {
		return nil
	}
	if ok, _ := ctx.Value(localOK{}).(bool); ok {
		return nil
	}
	return fmt.Errorf("the name resolved to %s, an address of this machine or a private network; "+
		"web_fetch reaches those only when the URL names them itself (and the user agreed)", ap.Addr())
}

// proxied reports a proxy set in the environment: the guard then leaves
// the decision to the proxy.
func proxied() bool {
	for _, k := range []string{"HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "ALL_PROXY", "all_proxy"} {
		if os.Getenv(k) != "" {
			return true
		}
	}
	return false
}

// guardedClient is web_fetch's default client: its dialer refuses local
// addresses the URL did not name (see checkDial).
func guardedClient() *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	if !proxied() {
		d := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second,
			ControlContext: func(ctx context.Context, _, address string, _ syscall.RawConn) error {
				return checkDial(ctx, address)
			}}
		t.DialContext = d.DialContext
	}
	return &http.Client{Transport: t}
}
