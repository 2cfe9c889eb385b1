//go:build !unix

package multi

import (
	"context"
	"errors"
)

// launch.NoFollow: no O_NOFOLLOW here.
const noFollow = 0

// Run needs what every verb that starts a node needs: see unsupported_other.go.
func (c *Cluster) Run(ctx context.Context, o RunOptions) (int, error) {
	return 1, errors.ErrUnsupported
}
