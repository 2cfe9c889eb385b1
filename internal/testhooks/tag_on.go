//go:build multitest

package testhooks

// tagged: built with -tags multitest, for the integration tests.
const tagged = true
