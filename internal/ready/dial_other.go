//go:build !unix

package ready

import (
	"context"
	"errors"
)

func checkTCP(ctx context.Context, hostport string) error { return errors.ErrUnsupported }
func checkHTTP(ctx context.Context, rawURL string) error  { return errors.ErrUnsupported }
