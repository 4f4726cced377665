package cli

import "testing"

// FRONT-2: loopbackAddr decides where rein mcp serve --http, and
// rein serve without authentication, may listen.
func TestLoopbackAddr_FRONT2(t *testing.T) {
	for addr, want := range map[string]bool{
		"127.0.0.1:7879": true, "localhost:0": true, "[::1]:9000": true,
		":7879": false, "0.0.0.0:7879": false, "192.168.1.2:80": false, "example.com:80": false, "127.0.0.1": false,
	} {
		if got := loopbackAddr(addr); got != want {
			t.Errorf("loopbackAddr(%q) = %v, want %v", addr, got, want)
		}
	}
}
