//go:build !linux

package secretenv

// overwriteEnvBlock does nothing: /proc/PID/environ is Linux's.
func overwriteEnvBlock() (int, error) { return 0, nil }

// setNonDumpable does nothing outside Linux.
func setNonDumpable() error { return nil }

func nonDumpable() bool { return false }
