//go:build !multitest

package testhooks

// tagged: a production build, where the hooks never act.
const tagged = false
