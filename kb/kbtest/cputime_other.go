//go:build !linux

package kbtest

import "time"

// ThreadCPU is Linux's only: elsewhere it reports nothing.
func ThreadCPU() (time.Duration, bool) { return 0, false }
