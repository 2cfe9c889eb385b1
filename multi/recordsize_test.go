package multi_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/multi-launcher/multi/nodes"
)

// A node whose record would be too large to read back fails the whole
// set before anything starts or is written.
func TestStartRecordTooLarge(t *testing.T) {
	c := cluster(t, "", "w1", "w2")
	for i := 0; i < 10; i++ {
		c.Nodes[1].Env = append(c.Nodes[1].Env, "K="+strings.Repeat("x", 120<<10))
	}
	res, err := c.Start(context.Background())
	if !errors.Is(err, nodes.ErrRecordTooLarge) {
		t.Errorf("Start: %v; want ErrRecordTooLarge", err)
	}
	for _, r := range res {
		if !errors.Is(r.Err, nodes.ErrRecordTooLarge) || r.PID != 0 {
			t.Errorf("%s: %s; want ErrRecordTooLarge, nothing started", r.Node.Name, r)
		}
	}
	if ents, _ := os.ReadDir(c.RunDir); len(ents) != 0 {
		t.Errorf("rundir holds %v; want nothing written", ents)
	}
}
