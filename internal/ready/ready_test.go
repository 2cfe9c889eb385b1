package ready_test

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// The checks use raw sockets: package net would link the cgo resolver,
// making multi a dynamic binary whose every exec step pays for ld.so
// (docs/benchmarks.md).
func TestMultiLinksNoNet(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "github.com/multi-launcher/multi").Output()
	if err != nil {
		t.Skipf("go list: %v", err)
	}
	deps := strings.Fields(string(out))
	for _, bad := range []string{"net", "net/http", "crypto/tls"} {
		if slices.Contains(deps, bad) {
			t.Errorf("multi links package %s", bad)
		}
	}
}
