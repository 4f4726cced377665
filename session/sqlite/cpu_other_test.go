//go:build !unix

package sqlite_test

import "time"

// processCPU is 0 where getrusage is missing: the benchmarks' cpu-ms/run
// reads 0 there.
func processCPU() time.Duration { return 0 }
