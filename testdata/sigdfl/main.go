//go:build linux

// Command sigdfl runs a command with signals 32 and 33 at their default
// disposition. make (its posix_spawn) starts recipes with both ignored,
// and an ignored signal stays ignored across exec; under qemu-user they
// are the host's own, which an emulated program cannot see or reset, so
// every node of the arm64 tests would inherit them ignored (make
// test-arm64 runs its tests through this; native tests reset them in
// multi itself).
package main

import (
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"unsafe"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: sigdfl COMMAND [ARG...]")
		os.Exit(2)
	}
	var act [4]uint64 // a kernel sigaction of SIG_DFL, no flags, empty mask
	for _, sig := range []uintptr{32, 33} {
		if _, _, e := syscall.RawSyscall6(syscall.SYS_RT_SIGACTION, sig, uintptr(unsafe.Pointer(&act)), 0, 8, 0, 0); e != 0 {
			fmt.Fprintf(os.Stderr, "sigdfl: signal %d: %v\n", sig, e)
			os.Exit(1)
		}
	}
	path, err := exec.LookPath(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "sigdfl:", err)
		os.Exit(127)
	}
	err = syscall.Exec(path, os.Args[1:], os.Environ())
	fmt.Fprintln(os.Stderr, "sigdfl:", err)
	os.Exit(126)
}
