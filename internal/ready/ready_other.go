//go:build !unix

package ready

import (
	"context"
	"errors"
)

// Off Unix: no raw sockets and no no-link walk, so no tcp, http or file
// check.

func checkTCP(ctx context.Context, hostport string) error { return errors.ErrUnsupported }
func checkHTTP(ctx context.Context, rawURL string) error  { return errors.ErrUnsupported }

// statNoLink: without the no-link walk, no file check.
func statNoLink(path string) error { return errors.ErrUnsupported }
