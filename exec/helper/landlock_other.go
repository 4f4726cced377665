//go:build !linux

package helper

import "errors"

// LandlockABI returns 0: Landlock is Linux's.
func LandlockABI() int { return 0 }

// Restrict fails: Landlock is Linux's.
func Restrict(Rules) error { return errors.New("Landlock exists only on Linux") }

func runHelper(Rules, []string) error { return Restrict(Rules{}) }
