//go:build !unix

package server

import (
	"net"
	"sync/atomic"
	"time"
)

// rawSocket is a parked stream's socket outside the runtime's poller;
// there is none on this platform (see rawconn_unix.go): every parked
// stream keeps its connection, and its steps run on goroutines of their
// own.
type rawSocket struct{}

func detachSocket(net.Conn) *rawSocket { return nil }

// rawWriteHook is rawconn_unix.go's; nothing calls it here.
var rawWriteHook atomic.Pointer[func()]

func (*rawSocket) tryWrite([]byte) (int, bool, error) { return 0, true, nil }

func (*rawSocket) writeAll([]byte, time.Time) error { return nil }

func (*rawSocket) left() bool { return false }

func (*rawSocket) close() {}
