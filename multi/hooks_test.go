package multi

import "github.com/multi-launcher/multi/internal/testhooks"

// The tests' hooks act in this test binary, the exec step it runs as
// included: on in a variable's initializer, before the step's init.
var _ = func() bool { testhooks.Enable(); return true }()
