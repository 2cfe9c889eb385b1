//go:build linux

package supervise

import (
	"testing"

	"github.com/multi-launcher/multi/internal/testutil"
)

// TestMain removes the empty cgroup folders the tests left: a run looks
// where its nodes' cgroups would go (cgroup.PlaceRun), which makes the
// rundir's folder, and the tests' host starts nodes without cgroups, so
// no stop removes it.
func TestMain(m *testing.M) { testutil.MainSweepingCgroups(m) }
