//go:build !linux

package memory

import "time"

// threadCPU is not measured here: benchmarks report wall time only.
func threadCPU() (now func() time.Duration, release func()) {
	return func() time.Duration { return 0 }, func() {}
}
