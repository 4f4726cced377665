//go:build !unix

package config

// lockFile is a no-op where flock does not exist: concurrent rein processes
// updating one file may lose a write there.
func lockFile(string) (func(), error) { return func() {}, nil }
