//go:build !unix

package workspace

import "errors"

// mkfifo: no named pipes on this system.
func mkfifo(string) error { return errors.New("no named pipes") }
