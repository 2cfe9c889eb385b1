//go:build unix && !(linux && amd64)

package launch

import (
	"context"

	"github.com/multi-launcher/multi/nodes"
)

// spawnDirect: every node starts through the exec step here.
func spawnDirect(ctx context.Context, rp *Reaper, n nodes.Node, env []string) (*Child, error) {
	return nil, errUseStep
}
