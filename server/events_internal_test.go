package server

import (
	"net"
	"testing"
)

// API-2, issue 30: a heartbeat learns that the client of a hijacked event
// stream closed its end at once, not at the next heartbeat's failed write;
// a client still there, or one that sent stray bytes, is not taken for
// gone.
func TestClientLeft(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	pair := func() (server, client net.Conn) {
		client, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		server, err = ln.Accept()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { server.Close(); client.Close() })
		return server, client
	}
	srv, cl := pair()
	if clientLeft(srv) {
		t.Error("an open, silent client was taken for gone")
	}
	if _, err := cl.Write([]byte("GET / HTTP/1.1\r\n")); err != nil { // pipelined bytes
		t.Fatal(err)
	}
	if clientLeft(srv) {
		t.Error("a client that sent bytes was taken for gone")
	}
	cl.Close()
	gone := false
	for range 1000 { // the bytes it sent are read first, one a probe
		if gone = clientLeft(srv); gone {
			break
		}
	}
	if !gone {
		t.Error("a client that closed its end was not noticed")
	}
	// A write to it still succeeds once: reading is what notices.
	srv2, cl2 := pair()
	cl2.Close()
	if _, err := srv2.Write([]byte(": ping\n\n")); err != nil {
		t.Logf("the first write after the close failed already (%v): fine, the probe is then a second net", err)
	}
	if !clientLeft(srv2) {
		t.Error("a client that closed its end was not noticed by the probe")
	}
}
