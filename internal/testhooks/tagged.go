//go:build multitest

package testhooks

// Built with -tags multitest, for the integration tests: the
// environment's hooks act from the start.
func init() { Enable() }
