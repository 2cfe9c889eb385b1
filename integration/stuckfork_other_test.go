//go:build !linux

package integration

// breakStuckForks has no emulator to work around here.
func breakStuckForks() {}
