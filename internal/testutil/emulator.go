package testutil

import (
	"fmt"
	"os"
)

// Emulator names the user-mode emulator this test binary runs under (qemu-user
// registered with binfmt_misc, as make test-arm64 runs the arm64 tests), or ""
// when it runs natively. The emulator answers for /proc/self/exe with the
// emulated program; the kernel's per-thread links, which it leaves alone,
// still name the emulator. Tests use it only to skip, or to adjust, what the
// emulator itself changes, and say so.
func Emulator() string {
	self, err := os.Readlink("/proc/self/exe")
	if err != nil {
		return ""
	}
	pid := os.Getpid()
	for _, p := range []string{"/proc/thread-self/exe", fmt.Sprintf("/proc/%d/task/%d/exe", pid, pid)} {
		if real, err := os.Readlink(p); err == nil && real != self {
			return real
		}
	}
	return ""
}
