//go:build linux && !amd64

package launch

// directAvailable: no direct start here.
func directAvailable() bool { return false }
