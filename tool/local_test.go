package tool

import "testing"

// PERM-2: the hosts that name this machine or a private network.
func TestLocalHost_PERM2(t *testing.T) {
	for host, want := range map[string]bool{
		"example.com": false, "93.184.216.34": false, "127.0.0.1": true, "api.localhost": true, "[::1]": true,
		"LOCALHOST.": true, "10.0.0.5": true, "169.254.169.254": true, "0.0.0.0": true, "[::ffff:127.0.0.1]": true,
	} {
		if got := LocalHost(host); got != want {
			t.Errorf("LocalHost(%q) = %v, want %v", host, got, want)
		}
	}
}
