//go:build !linux

package integration

import "errors"

// takeLock needs OFD locks, which only Linux has.
func takeLock(path, kind string) error { return errors.ErrUnsupported }
