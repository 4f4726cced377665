//go:build !linux

package exec

import (
	"errors"
	osexec "os/exec"
)

// LandlockABI returns 0: Landlock is Linux's.
func LandlockABI() int { return 0 }

func runHelper(landlockRules, []string) error {
	return errors.New("Landlock exists only on Linux")
}

func startLandlocked(*osexec.Cmd, landlockRules) error {
	return errors.New("Landlock exists only on Linux")
}
