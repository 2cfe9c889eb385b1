//go:build linux

package main

import (
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/multi-launcher/multi/internal/cgroup"
)

// The ready tail (issue 22): with a readiness check, the time from the
// last node's READY=1 (or line on its descriptor) to `multi start`'s
// return, as the driver's wait4 sees it. The nodes are `readynode -gate
// DIR` (testdata/bench/readynode): each says hello on a fifo, then blocks reading a byte from
// the gate fifo, which the driver writes once all N have said hello, so
// that every node is started before any is ready; each reads
// CLOCK_MONOTONIC just before its send. tail = wait4's CLOCK_MONOTONIC -
// max over nodes of the send's. With gap 0 the driver writes the N bytes
// at once (a burst: every node ready at the same moment, start handles N
// readies after the last is sent); with a gap, one byte every gap (each
// node's ready handled before the next, so the tail is what follows the
// last one alone).
type tailRow struct {
	mode  string // the --ready check: notify, fd:3
	gap   time.Duration
	n     int
	round int
	tail  time.Duration
	start time.Duration // start's wall time, from its exec to its exit
	load  float64       // the machine's 1-minute load average at the run's start
	err   string
}

// readyTail runs `multi start --ready=MODE N` for each mode, N and round,
// interleaved, and then `multi stopwait`.
func readyTail(multiBin, readyBin, base string, ns []int, rounds int, modes []string, gaps []time.Duration) []tailRow {
	var rows []tailRow
	for round := 1; round <= rounds; round++ {
		for _, n := range ns {
			for _, gap := range gaps {
				for k := range modes {
					mode := modes[(k+round-1)%len(modes)]
					if stopping.Load() {
						return rows
					}
					dir := filepath.Join(base, fmt.Sprintf("tail-%s-n%d-g%d-r%d", slug(mode), n, gap.Microseconds(), round))
					r := tailOnce(multiBin, readyBin, dir, mode, n, gap)
					r.round = round
					rows = append(rows, r)
					status := "ok"
					if r.err != "" {
						status = "ERROR " + r.err
					}
					fmt.Fprintf(os.Stderr, "tail  r%d N=%-5d --ready=%-8s gap %-6s tail %8.3fms  start %8.3fs  %s\n",
						round, n, mode, gap, ms(r.tail), r.start.Seconds(), status)
				}
			}
		}
	}
	return rows
}

// helloTimeout bounds the wait for every node of a tail run to be
// started (a start of 1000 takes a few seconds).
const helloTimeout = 30 * time.Second

func tailOnce(multiBin, readyBin, dir, mode string, n int, gap time.Duration) (r tailRow) {
	r.mode, r.n, r.gap, r.load = mode, n, gap, loadAvg()
	gate, rundir := filepath.Join(dir, "g"), filepath.Join(dir, "run")
	defer func() {
		if k := cleanupAll(); k > 0 && r.err == "" {
			r.err = fmt.Sprintf("%d processes left running", k)
		}
		if err := cgroupLeft(rundir); err != nil && r.err == "" {
			r.err = err.Error()
		}
		os.RemoveAll(dir)
	}()
	if err := os.MkdirAll(gate, 0o755); err != nil {
		r.err = err.Error()
		return r
	}
	for _, f := range []string{"hello", "gate"} {
		if err := unix.Mkfifo(filepath.Join(gate, f), 0o600); err != nil {
			r.err = err.Error()
			return r
		}
	}
	// Read and write: the nodes' opens never block, and the read below
	// does not end when no node has it open.
	hello, err := os.OpenFile(filepath.Join(gate, "hello"), os.O_RDWR, 0)
	if err != nil {
		r.err = err.Error()
		return r
	}
	defer hello.Close()
	gateFD, err := unix.Open(filepath.Join(gate, "gate"), unix.O_RDWR|unix.O_CLOEXEC, 0)
	if err != nil {
		r.err = err.Error()
		return r
	}
	defer unix.Close(gateFD)
	env := append(os.Environ(), "MULTI_RUNDIR="+rundir)
	node := []string{readyBin, "-gate", gate}
	if fd, ok := strings.CutPrefix(mode, "fd:"); ok {
		node = append(node, "-fd", fd)
	}
	argv := append([]string{multiBin, "start", "--ready=" + mode, strconv.Itoa(n), "--"}, node...)
	p, err := start(argv, spawnOpts{env: env, capture: true})
	if err != nil {
		r.err = err.Error()
		return r
	}
	// The gate opens once all n have said hello.
	opened := make(chan error, 1)
	go func() {
		// A node that failed to start never says hello; then, rather
		// than start waiting out its ready timeout for the others, they
		// are let through and the run fails.
		hello.SetReadDeadline(time.Now().Add(helloTimeout))
		buf := make([]byte, 4096)
		for got := 0; got < n; {
			k, err := hello.Read(buf)
			if err != nil {
				unix.Write(gateFD, make([]byte, n))
				opened <- fmt.Errorf("%d of %d nodes said hello: %w", got, n, err)
				return
			}
			got += k
		}
		if gap == 0 {
			_, err := unix.Write(gateFD, make([]byte, n))
			opened <- err
			return
		}
		for i := 0; i < n; i++ {
			if i > 0 {
				time.Sleep(gap)
			}
			if _, err := unix.Write(gateFD, []byte{1}); err != nil {
				opened <- err
				return
			}
		}
		opened <- nil
	}()
	e := p.wait()
	out := p.output()
	r.start = e.end.Sub(p.begin)
	var gateErr error
	select {
	case gateErr = <-opened:
	case <-time.After(time.Second):
		// start is over, and not every node said hello: end the
		// goroutine's read (it opens the gate), and wait for it, which
		// writes to gateFD before it is closed.
		hello.SetReadDeadline(time.Now())
		<-opened
		gateErr = fmt.Errorf("the gate was not open when start returned")
	}
	defer run([]string{multiBin, "stopwait", "--timeout=10s"}, spawnOpts{env: env, capture: true})
	if err := e.err(); err != nil {
		r.err = fmt.Sprintf("start: %v: %s", err, failedLines(out, 3))
		keepOutput(filepath.Base(dir), out)
		return r
	}
	if gateErr != nil {
		r.err = gateErr.Error()
		return r
	}
	last, err := lastStamp(gate, n, 10*time.Second)
	if err != nil {
		r.err = err.Error()
		return r
	}
	r.tail = time.Duration(e.mono - last)
	return r
}

// keepOutput writes a failed start's whole output to the -out folder.
func keepOutput(name, out string) {
	os.MkdirAll(*flagOut, 0o755)
	path := filepath.Join(*flagOut, "failed-"+name+".log")
	if os.WriteFile(path, []byte(out), 0o644) == nil {
		fmt.Fprintf(os.Stderr, "driver: its output is in %s\n", path)
	}
}

// lastStamp waits for n stamp files in dir and returns the latest stamp.
func lastStamp(dir string, n int, timeout time.Duration) (int64, error) {
	deadline := time.Now().Add(timeout)
	for {
		ents, _ := os.ReadDir(dir)
		var stamps []int64
		for _, e := range ents {
			if !strings.HasPrefix(e.Name(), "stamp.") || strings.HasSuffix(e.Name(), ".tmp") {
				continue
			}
			b, err := os.ReadFile(filepath.Join(dir, e.Name()))
			if err != nil {
				continue
			}
			if v, err := strconv.ParseInt(string(b), 10, 64); err == nil {
				stamps = append(stamps, v)
			}
		}
		if len(stamps) >= n {
			sort.Slice(stamps, func(i, j int) bool { return stamps[i] < stamps[j] })
			return stamps[len(stamps)-1], nil
		}
		if time.Now().After(deadline) {
			return 0, fmt.Errorf("%d of %d nodes wrote their send time", len(stamps), n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func writeTailTSV(path string, rows []tailRow, m meta) {
	var b strings.Builder
	for _, l := range m.lines() {
		fmt.Fprintf(&b, "# %s\n", l)
	}
	b.WriteString("mode\tgap_us\tn\tround\ttail_ms\tstart_s\tload\terror\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "%s\t%d\t%d\t%d\t%.3f\t%.4f\t%.2f\t%s\n", r.mode, r.gap.Microseconds(), r.n, r.round, ms(r.tail), r.start.Seconds(), r.load, r.err)
	}
	os.WriteFile(path, []byte(b.String()), 0o644)
}

// tailTarget is issue 22's: at most 2 ms at N=100, median of 5.
const tailTarget = 2 * time.Millisecond

func reportTail(w io.Writer, rows []tailRow) {
	if len(rows) == 0 {
		return
	}
	type key struct {
		mode string
		gap  time.Duration
		n    int
	}
	order, groups := groupBy(rows, func(r tailRow) key { return key{r.mode, r.gap, r.n} })
	sort.SliceStable(order, func(i, j int) bool {
		if order[i].n != order[j].n {
			return order[i].n < order[j].n
		}
		if order[i].gap != order[j].gap {
			return order[i].gap < order[j].gap
		}
		return order[i].mode > order[j].mode // notify first
	})
	fmt.Fprintf(w, "### ready tail: last node's READY=1 to start's return (wait4)\n\n")
	fmt.Fprintln(w, "| N | --ready | readies | rounds | tail median (ms) | tail min–max (ms) | start median (s) | load (1-min avg) | target | errors |")
	fmt.Fprintln(w, "|---:|---|---|---:|---:|---:|---:|---:|---|---:|")
	for _, k := range order {
		var tails, starts []time.Duration
		errs := 0
		loadLo, loadHi := math.MaxFloat64, 0.0
		for _, r := range groups[k] {
			loadLo, loadHi = min(loadLo, r.load), max(loadHi, r.load)
			if r.err != "" {
				errs++
				continue
			}
			tails, starts = append(tails, r.tail), append(starts, r.start)
		}
		lo, hi := time.Duration(0), time.Duration(0)
		if len(tails) > 0 {
			lo, hi = slicesMin(tails), slicesMax(tails)
		}
		target := "–"
		if k.n == 100 && k.mode == "notify" && len(tails) > 0 {
			target = fmt.Sprintf("≤ %s: **not met**", fmtMs(tailTarget))
			if median(tails) <= tailTarget {
				target = fmt.Sprintf("≤ %s: met", fmtMs(tailTarget))
			}
		}
		readies := "all at once"
		if k.gap > 0 {
			readies = "one every " + k.gap.String()
		}
		fmt.Fprintf(w, "| %d | %s | %s | %d | %.3f | %.3f–%.3f | %.3f | %.1f–%.1f | %s | %d |\n",
			k.n, k.mode, readies, len(tails), ms(median(tails)), ms(lo), ms(hi), median(starts).Seconds(), loadLo, loadHi, target, errs)
	}
	fmt.Fprintln(w)
}

func slicesMin(ds []time.Duration) time.Duration {
	m := ds[0]
	for _, d := range ds {
		m = min(m, d)
	}
	return m
}

func slicesMax(ds []time.Duration) time.Duration {
	m := ds[0]
	for _, d := range ds {
		m = max(m, d)
	}
	return m
}

// loadAvg is the 1-minute load average: the tail is a few milliseconds,
// and the other work on the machine is most of its spread.
func loadAvg() float64 {
	b, _ := os.ReadFile("/proc/loadavg")
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 0
	}
	v, _ := strconv.ParseFloat(f[0], 64)
	return v
}

// cgroupLeft reports a cgroup folder that multi left for rundir (as root
// it makes one per rundir, under the cgroup of its caller: the driver's),
// and removes it if it is empty.
func cgroupLeft(rundir string) error {
	own, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return nil
	}
	var rel string
	for _, l := range strings.Split(string(own), "\n") {
		if p, ok := strings.CutPrefix(l, "0::"); ok {
			rel = p
		}
	}
	mount := cgroup2Mount()
	if rel == "" || mount == "" {
		return nil
	}
	parent := filepath.Join(mount, rel, cgroup.ParentName(rundir))
	if _, err := os.Stat(parent); err != nil {
		return nil
	}
	ents, _ := os.ReadDir(parent)
	var kids []string
	for _, e := range ents {
		if e.IsDir() {
			kids = append(kids, e.Name())
			os.Remove(filepath.Join(parent, e.Name()))
		}
	}
	os.Remove(parent)
	return fmt.Errorf("cgroup %s left after stopwait (%d node folders)", parent, len(kids))
}

// cgroup2Mount is where /proc/self/mountinfo has the cgroup2 hierarchy.
func cgroup2Mount() string {
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return ""
	}
	for _, l := range strings.Split(string(b), "\n") {
		pre, post, ok := strings.Cut(l, " - ")
		if !ok || !strings.HasPrefix(post, "cgroup2 ") {
			continue
		}
		if f := strings.Fields(pre); len(f) > 4 {
			return f[4]
		}
	}
	return ""
}
