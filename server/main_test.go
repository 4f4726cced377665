package server_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package when a goroutine outlives the tests: an SSE
// handler that never ends, a subscription never closed.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
