package nodes

import (
	"os"
	"path/filepath"
	"strconv"
)

// Hostname returns this machine's host name, or "localhost" when it has none.
func Hostname() string {
	h, err := os.Hostname()
	if err != nil || h == "" {
		return "localhost"
	}
	return h
}

// DefaultRunDir returns the folder multi uses without --rundir:
// $MULTI_RUNDIR, else /run/multi for root, $XDG_RUNTIME_DIR/multi, else
// $TMPDIR/multi-UID.
func DefaultRunDir() string {
	if d := os.Getenv("MULTI_RUNDIR"); d != "" {
		if abs, err := filepath.Abs(d); err == nil {
			return abs
		}
	}
	if os.Geteuid() == 0 {
		return "/run/multi"
	}
	if x := os.Getenv("XDG_RUNTIME_DIR"); x != "" && filepath.IsAbs(x) {
		return filepath.Join(x, "multi")
	}
	return filepath.Join(os.TempDir(), "multi-"+strconv.Itoa(os.Geteuid()))
}
