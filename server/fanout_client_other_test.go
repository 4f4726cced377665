//go:build !linux

package server_test

// runFanoutClients is BenchmarkFanout's clients' main on linux (the
// benchmark is linux only): here the process is always the tests'.
func runFanoutClients() (code int, ok bool) { return 0, false }
