//go:build !linux

package waiter_test

const pidfdWakeups = false
