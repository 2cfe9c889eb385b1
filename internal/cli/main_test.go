package cli

import (
	"testing"

	"github.com/multi-launcher/multi/internal/testutil"
)

// TestMain removes the empty cgroup folders the tests' nodes left.
func TestMain(m *testing.M) { testutil.MainSweepingCgroups(m) }
