//go:build !unix

package workspace

// lockFile is a no-op where flock does not exist: concurrent rein processes
// updating one file may lose a write there.
func lockFile(string) (func(), error) { return func() {}, nil }
