package server_test

import (
	"os"
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package when a goroutine outlives the tests: an SSE
// handler that never ends, a subscription never closed. Started as
// BenchmarkFanout's clients (see fanoutClients), the binary is those
// instead.
func TestMain(m *testing.M) {
	if code, ok := runFanoutClients(); ok {
		os.Exit(code)
	}
	goleak.VerifyTestMain(m)
}
