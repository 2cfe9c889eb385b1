package multi

import (
	"os"
	"path/filepath"
	"strings"
)

// nameStep gives the exec step, started as /proc/self/exe (so named "exe"
// by the kernel), its program's own name, as ps and /proc/PID/comm show
// it for the moment before it execs the node's command.
func nameStep() {
	self, err := os.Readlink(procSelfExe)
	if err != nil {
		return
	}
	name := strings.TrimSuffix(filepath.Base(self), " (deleted)")
	os.WriteFile("/proc/self/comm", []byte(name), 0) // the kernel cuts it to 15 bytes
}
