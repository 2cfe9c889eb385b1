//go:build unix

package step

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"syscall"
)

// A Limit is one rlimit the step sets: its name (nofile, nproc, core,
// as) and its soft and hard values.
type Limit struct {
	Name       string
	Soft, Hard uint64
}

// parseLimits parses [LimitsEnv]'s value.
func parseLimits(v string) ([]Limit, error) {
	var out []Limit
	for _, item := range strings.Split(v, ",") {
		if item == "" {
			continue
		}
		name, val, ok1 := strings.Cut(item, "=")
		a, b, ok2 := strings.Cut(val, ":")
		soft, err1 := strconv.ParseUint(a, 10, 64)
		hard, err2 := strconv.ParseUint(b, 10, 64)
		if !ok1 || !ok2 || err1 != nil || err2 != nil {
			return nil, fmt.Errorf("exec step: bad %s %q", LimitsEnv, v)
		}
		out = append(out, Limit{name, soft, hard})
	}
	return out, nil
}

// FormatLimits is [LimitsEnv]'s value for lims.
func FormatLimits(lims []Limit) string {
	var b strings.Builder
	for i, l := range lims {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "%s=%d:%d", l.Name, l.Soft, l.Hard)
	}
	return b.String()
}

// setLimits sets each limit on this process, which its exec hands to
// the node, or says which one it could not set and why. A limit on
// descriptors set here is the one the exec keeps: Go's runtime restores
// its caller's RLIMIT_NOFILE at an exec only while nothing has set it
// since.
func setLimits(lims []Limit) error {
	for _, l := range lims {
		res, ok := RlimitResource(l.Name)
		if !ok {
			return LimitError(l.Name, l.Soft, l.Hard, 0, errors.ErrUnsupported)
		}
		curHard := hardLimit(res)
		if err := setrlimit(res, l.Soft, l.Hard); err != nil {
			return LimitError(l.Name, l.Soft, l.Hard, curHard, err)
		}
		// Read back: an emulator (qemu-user) answers success to an
		// RLIMIT_AS it keeps to itself, and the node would run without it.
		if soft, hard, ok := getrlimit(res); ok && (soft != l.Soft || hard != l.Hard) {
			hint := ""
			if l.Name == "as" {
				hint = " (an emulator such as qemu-user keeps RLIMIT_AS to itself)"
			}
			return fmt.Errorf("--limit-%s=%s: set %s, but this process has %s: %w%s",
				l.Name, formatLimit(l.Soft, l.Hard), rlimitName(l.Name), formatLimit(soft, hard), errLimitNotKept, hint)
		}
	}
	return nil
}

// errLimitNotKept: the system took a limit, but the process does not
// have it.
var errLimitNotKept = errors.New("limit not kept")

// LimitError is the error of a node's rlimit name that could not be set
// to soft and hard: its flag and value, the resource and why; hard above
// curHard, this process's own, is what an unprivileged process may not
// do.
func LimitError(name string, soft, hard, curHard uint64, err error) error {
	hint := ""
	if errors.Is(err, syscall.EPERM) && hard > curHard {
		hint = fmt.Sprintf(" (the hard limit may not go above this process's own, %s, without CAP_SYS_RESOURCE)", limitWord(curHard))
	}
	if errors.Is(err, errors.ErrUnsupported) {
		return fmt.Errorf("--limit-%s=%s: %w: rlimits are set on Linux only", name, formatLimit(soft, hard), err)
	}
	return fmt.Errorf("--limit-%s=%s: cannot set %s: %w%s", name, formatLimit(soft, hard), rlimitName(name), err, hint)
}

// rlimitName is the system's name of the rlimit name: RLIMIT_NOFILE.
func rlimitName(name string) string { return "RLIMIT_" + strings.ToUpper(name) }

// formatLimit is an rlimit's value as a user gives it (nodes.FormatRlimit).
func formatLimit(soft, hard uint64) string {
	if soft == hard {
		return limitWord(soft)
	}
	return limitWord(soft) + ":" + limitWord(hard)
}

func limitWord(v uint64) string {
	if v == math.MaxUint64 {
		return "infinity"
	}
	return strconv.FormatUint(v, 10)
}
