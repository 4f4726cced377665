//go:build !linux

package main

import "time"

// threadCPU is Linux's only: elsewhere it reports nothing.
func threadCPU() (time.Duration, bool) { return 0, false }
