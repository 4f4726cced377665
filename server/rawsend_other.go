//go:build unix && !linux

package server

import "syscall"

// send is one write(2) of b; the socket is non-blocking (see rawSocket).
// Linux sends without the file layer (rawsend_linux.go).
func (r *rawSocket) send(b []byte) (int, error) { return syscall.Write(r.fd, b) }
