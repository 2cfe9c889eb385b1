package record_test

import "github.com/multi-launcher/multi/internal/testhooks"

// The tests' hooks (the record writer's FIFO) act in this test binary.
func init() { testhooks.Enable() }
