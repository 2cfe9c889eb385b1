package nodes

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Limits are what a node's process may not pass, recorded with the node
// so that every later start sets them again. Each is "" when not given.
//
// The first four are rlimits (setrlimit(2)), set in the node's own
// process before it execs its command, soft and hard, as systemd's
// LimitNOFILE= sets them: "N" (both), "SOFT:HARD", "infinity" for none;
// Core and AS are bytes. The others are cgroup v2 limits, written into
// the node's own cgroup before its process joins it: MemoryMax and
// MemoryHigh bytes or "max", CPUMax "QUOTA PERIOD" (microseconds) or
// "max PERIOD", PidsMax a count or "max". The last two bound its
// logfile: LogMaxSize bytes, past which the node's log writer rotates
// it, LogKeep how many rotated files it keeps ([Limits.LogRotation]).
// [Limits.Set] takes each as a user gives it and keeps it in this form.
type Limits struct {
	NOFILE     string `json:"nofile,omitempty"`
	NPROC      string `json:"nproc,omitempty"`
	Core       string `json:"core,omitempty"`
	AS         string `json:"as,omitempty"`
	MemoryMax  string `json:"memory_max,omitempty"`
	MemoryHigh string `json:"memory_high,omitempty"`
	CPUMax     string `json:"cpu_max,omitempty"`
	PidsMax    string `json:"pids_max,omitempty"`
	LogMaxSize string `json:"log_max_size,omitempty"`
	LogKeep    string `json:"log_keep,omitempty"`
}

// LimitNames are the names [Limits.Set] takes: the rlimits (RlimitNames)
// first, then the cgroup v2 limits, then the logfile's.
var LimitNames = []string{"nofile", "nproc", "core", "as", "memory_max", "memory_high", "cpu_max", "pids_max", "log_max_size", "log_keep"}

// RlimitNames are the limits of LimitNames that are rlimits.
var RlimitNames = LimitNames[:4]

// LimitFlag is the command-line flag of the limit name: --limit-nofile,
// --memory-max.
func LimitFlag(name string) string {
	if isRlimit(name) {
		return "--limit-" + name
	}
	return "--" + strings.ReplaceAll(name, "_", "-")
}

// ErrBadLimit is wrapped by the error of a limit's value that is not
// one.
var ErrBadLimit = errors.New("bad limit")

func isRlimit(name string) bool {
	for _, r := range RlimitNames {
		if r == name {
			return true
		}
	}
	return false
}

// field is the field of l that holds the limit name, nil for none.
func (l *Limits) field(name string) *string {
	switch name {
	case "nofile":
		return &l.NOFILE
	case "nproc":
		return &l.NPROC
	case "core":
		return &l.Core
	case "as":
		return &l.AS
	case "memory_max":
		return &l.MemoryMax
	case "memory_high":
		return &l.MemoryHigh
	case "cpu_max":
		return &l.CPUMax
	case "pids_max":
		return &l.PidsMax
	case "log_max_size":
		return &l.LogMaxSize
	case "log_keep":
		return &l.LogKeep
	}
	return nil
}

// Get returns the limit name as l holds it, "" when not set.
func (l Limits) Get(name string) string {
	if f := l.field(name); f != nil {
		return *f
	}
	return ""
}

// Set sets the limit name (one of LimitNames) from value as a user gives
// it: "64", "1024:4096", "512M", "infinity", "50%". The error, wrapping
// [ErrBadLimit], says what the value may be; it does not name the flag.
func (l *Limits) Set(name, value string) error {
	f := l.field(name)
	if f == nil {
		return fmt.Errorf("%w: no limit %q", ErrBadLimit, name)
	}
	v, err := canonLimit(name, strings.TrimSpace(value))
	if err != nil {
		return err
	}
	*f = v
	return nil
}

// checked is l with each limit checked and in its form, or the first
// that is not one, named by its flag.
func (l Limits) checked() (Limits, error) {
	var out Limits
	for _, name := range LimitNames {
		if v := l.Get(name); v != "" {
			if err := out.Set(name, v); err != nil {
				return Limits{}, fmt.Errorf("%s: %w", LimitFlag(name), err)
			}
		}
	}
	if out.LogKeep != "" && out.LogMaxSize == "" {
		return Limits{}, fmt.Errorf("--log-keep: %w: rotated files are kept only with --log-max-size", ErrBadLimit)
	}
	return out, nil
}

// DefaultLogKeep is how many rotated logfiles a node with a
// --log-max-size and no --log-keep keeps.
const DefaultLogKeep = 5

// LogRotation returns the size past which the node's logfile is
// rotated and how many rotated files are kept; ok is false when l sets
// no size: the node then writes its logfile itself, unbounded.
func (l Limits) LogRotation() (maxSize int64, keep int, ok bool) {
	if l.LogMaxSize == "" {
		return 0, 0, false
	}
	n, err := strconv.ParseInt(l.LogMaxSize, 10, 64)
	if err != nil || n < minLogSize {
		return 0, 0, false
	}
	keep = DefaultLogKeep
	if l.LogKeep != "" {
		if keep, err = strconv.Atoi(l.LogKeep); err != nil {
			return 0, 0, false
		}
	}
	return n, keep, true
}

// minLogSize is the smallest --log-max-size: a logfile holds at least a
// few lines and its markers.
const minLogSize = 4 << 10

// maxLogKeep is the largest --log-keep.
const maxLogKeep = 1000

// Cgroup reports whether l sets a cgroup v2 limit.
func (l Limits) Cgroup() bool {
	return l.MemoryMax != "" || l.MemoryHigh != "" || l.CPUMax != "" || l.PidsMax != ""
}

// Infinity is an rlimit's "infinity": no limit (RLIM_INFINITY).
const Infinity = math.MaxUint64

// An Rlimit is one rlimit of a node, parsed: its name (RlimitNames) and
// its soft and hard values, [Infinity] for none.
type Rlimit struct {
	Name       string
	Soft, Hard uint64
}

// String is the value as [Limits] holds it: "N" when soft and hard are
// the same, else "SOFT:HARD".
func (r Rlimit) String() string { return FormatRlimit(r.Soft, r.Hard) }

// FormatRlimit is an rlimit's value as [Limits] holds it.
func FormatRlimit(soft, hard uint64) string {
	if soft == hard {
		return rlimitWord(soft)
	}
	return rlimitWord(soft) + ":" + rlimitWord(hard)
}

func rlimitWord(v uint64) string {
	if v == Infinity {
		return "infinity"
	}
	return strconv.FormatUint(v, 10)
}

// Rlimits returns the rlimits l sets, in RlimitNames' order.
func (l Limits) Rlimits() ([]Rlimit, error) {
	var out []Rlimit
	for _, name := range RlimitNames {
		v := l.Get(name)
		if v == "" {
			continue
		}
		soft, hard, err := parseRlimit(name, v)
		if err != nil {
			return nil, fmt.Errorf("%s=%s: %w", LimitFlag(name), v, err)
		}
		out = append(out, Rlimit{Name: name, Soft: soft, Hard: hard})
	}
	return out, nil
}

// canonLimit is value checked, in the form Limits holds the limit name.
func canonLimit(name, value string) (string, error) {
	switch name {
	case "nofile", "nproc", "core", "as":
		soft, hard, err := parseRlimit(name, value)
		if err != nil {
			return "", err
		}
		return FormatRlimit(soft, hard), nil
	case "memory_max", "memory_high":
		if value == "max" || value == "infinity" {
			return "max", nil
		}
		n, err := parseSize(value)
		if err != nil {
			return "", fmt.Errorf("%w: want bytes (with K, M, G or T: 512M) or max, not %q", ErrBadLimit, Printable(value))
		}
		return strconv.FormatUint(n, 10), nil
	case "cpu_max":
		return canonCPUMax(value)
	case "pids_max":
		if value == "max" || value == "infinity" {
			return "max", nil
		}
		n, err := strconv.ParseUint(value, 10, 31)
		if err != nil || n == 0 {
			return "", fmt.Errorf("%w: want a count of tasks from 1, or max, not %q", ErrBadLimit, Printable(value))
		}
		return strconv.FormatUint(n, 10), nil
	case "log_max_size":
		n, err := parseSize(value)
		if err != nil || n < minLogSize {
			return "", fmt.Errorf("%w: want bytes from 4K (with K, M or G: 10M), not %q", ErrBadLimit, Printable(value))
		}
		return strconv.FormatUint(n, 10), nil
	case "log_keep":
		n, err := strconv.ParseUint(value, 10, 31)
		if err != nil || n > maxLogKeep {
			return "", fmt.Errorf("%w: want a count of rotated files from 0 to %d, not %q", ErrBadLimit, maxLogKeep, Printable(value))
		}
		return strconv.FormatUint(n, 10), nil
	}
	return "", fmt.Errorf("%w: no limit %q", ErrBadLimit, name)
}

// parseRlimit parses an rlimit's value: N, SOFT:HARD, infinity; in bytes
// (K, M, G and T allowed) for core and as.
func parseRlimit(name, value string) (soft, hard uint64, err error) {
	sizes := name == "core" || name == "as"
	want := "N or SOFT:HARD (numbers, or infinity)"
	if sizes {
		want = "BYTES or SOFT:HARD (bytes, with K, M, G or T: 512M; or infinity)"
	}
	bad := func() (uint64, uint64, error) {
		return 0, 0, fmt.Errorf("%w: want %s, not %q", ErrBadLimit, want, Printable(value))
	}
	one := func(s string) (uint64, bool) {
		s = strings.TrimSpace(s)
		if s == "infinity" {
			return Infinity, true
		}
		if sizes {
			n, err := parseSize(s)
			return n, err == nil
		}
		n, err := strconv.ParseUint(s, 10, 64)
		return n, err == nil && n != Infinity
	}
	a, b, pair := strings.Cut(value, ":")
	var ok bool
	if soft, ok = one(a); !ok {
		return bad()
	}
	hard = soft
	if pair {
		if hard, ok = one(b); !ok {
			return bad()
		}
	}
	if soft > hard {
		return 0, 0, fmt.Errorf("%w: soft limit %s above the hard limit %s in %q", ErrBadLimit, rlimitWord(soft), rlimitWord(hard), Printable(value))
	}
	return soft, hard, nil
}

// parseSize parses bytes: digits, then K, M, G or T (powers of 1024, as
// systemd's LimitAS= and the cgroup files take them); below 2^63.
func parseSize(s string) (uint64, error) {
	mult := uint64(1)
	if n := len(s); n > 0 {
		switch s[n-1] {
		case 'K', 'k':
			mult = 1 << 10
		case 'M', 'm':
			mult = 1 << 20
		case 'G', 'g':
			mult = 1 << 30
		case 'T', 't':
			mult = 1 << 40
		}
		if mult > 1 {
			s = s[:n-1]
		}
	}
	n, err := strconv.ParseUint(s, 10, 63)
	if err != nil {
		return 0, err
	}
	if n > math.MaxInt64/mult {
		return 0, strconv.ErrRange
	}
	return n * mult, nil
}

// canonCPUMax is cpu.max's value from "max", "N%" (of one CPU: 150% is
// one and a half), "QUOTA" or "QUOTA PERIOD" (microseconds; "max
// PERIOD"): "QUOTA PERIOD", the period 100000 (100 ms) unless given.
func canonCPUMax(value string) (string, error) {
	bad := fmt.Errorf("%w: want a share of one CPU (50%%, 200%%), QUOTA or \"QUOTA PERIOD\" in microseconds, or max, not %q", ErrBadLimit, Printable(value))
	const period = 100000
	if p, ok := strings.CutSuffix(value, "%"); ok {
		n, err := strconv.ParseUint(p, 10, 32)
		if err != nil || n == 0 {
			return "", bad
		}
		return strconv.FormatUint(n*period/100, 10) + " " + strconv.Itoa(period), nil
	}
	f := strings.Fields(value)
	if len(f) == 0 || len(f) > 2 {
		return "", bad
	}
	per := uint64(period)
	if len(f) == 2 {
		n, err := strconv.ParseUint(f[1], 10, 32)
		if err != nil || n < 1000 || n > 1000000 {
			return "", fmt.Errorf("%w: the period of %q is 1000 to 1000000 microseconds", ErrBadLimit, Printable(value))
		}
		per = n
	}
	if f[0] == "max" {
		return "max " + strconv.FormatUint(per, 10), nil
	}
	q, err := strconv.ParseUint(f[0], 10, 32)
	if err != nil || q < 1000 {
		if err == nil {
			return "", fmt.Errorf("%w: the quota of %q is 1000 microseconds or more", ErrBadLimit, Printable(value))
		}
		return "", bad
	}
	return strconv.FormatUint(q, 10) + " " + strconv.FormatUint(per, 10), nil
}
