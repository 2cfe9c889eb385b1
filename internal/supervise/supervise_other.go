//go:build !unix

package supervise

import (
	"context"
	"errors"

	"github.com/multi-launcher/multi/nodes"
)

// Run needs sessions, POSIX record locks and a reaper: off Unix it fails
// with errors.ErrUnsupported.
func Run(ctx context.Context, h Host, ns []nodes.Node, o Options) (code int, why error) {
	return 1, errors.ErrUnsupported
}
