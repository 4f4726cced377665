//go:build !unix

package server

import "net"

// rawSocket is a parked stream's socket written without waiting; there is
// none on this platform (see rawconn_unix.go): every parked stream's steps
// run on goroutines of their own.
type rawSocket struct{}

func newRawSocket(net.Conn) *rawSocket { return nil }

func (*rawSocket) tryWrite(b []byte) (int, bool, error) { return 0, true, nil }

func (*rawSocket) left() bool { return false }
