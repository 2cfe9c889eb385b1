//go:build !unix

package multi

import (
	"context"
	"errors"
	"time"

	"github.com/multi-launcher/multi/nodes"
)

// Nodes need sessions, POSIX record locks and exec: elsewhere every verb
// that starts or signals a node fails with errors.ErrUnsupported.

func spawn(_ context.Context, n nodes.Node, env []string, lockTimeout time.Duration) (*child, error) {
	return nil, errors.ErrUnsupported
}

func (ch *child) recheck() error { return errors.ErrUnsupported }

func standbyStart(n nodes.Node) bool { return false }

func (ch *child) letGo(detach bool) {}
