//go:build !unix

package ready

import "errors"

// statNoLink: without the no-link walk, no file check.
func statNoLink(path string) error { return errors.ErrUnsupported }
