//go:build linux

// Command driver runs multi and its peers (start-stop-daemon, supervisord,
// celery multi) on the same work, interleaved over several rounds, and
// prints a table: N, tool, start, stopwait, wait overhead, peak RSS. It is
// the engine of `make bench` (testdata/bench/bench.sh); see
// docs/benchmarks.md.
//
// It runs as a child subreaper, reaps every process at once, timestamps
// each node's death through a pidfd, and kills by pid whatever it started
// that is still alive when it ends, on failure and on SIGINT/SIGTERM too.
//
//	driver -multi bin/multi -n 10,100,500,1000 -rounds 3 -out DIR
//	driver slownode 10s   (a node that takes 10s to stop after SIGTERM)
package main

import (
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/signal"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

var (
	flagMulti        = flag.String("multi", "bin/multi", "the multi binary")
	flagNs           = flag.String("n", "10,100,500,1000", "node counts, comma or space separated")
	flagRounds       = flag.Int("rounds", 3, "rounds; each round runs every tool on every N, interleaved")
	flagTools        = flag.String("tools", "multi,multi-notify,start-stop-daemon,supervisord,celery", "tools to run")
	flagDir          = flag.String("dir", "", "folder for the runs' pidfiles and logs (default: /dev/shm if it is a tmpfs, else the temp dir)")
	flagDiskDir      = flag.String("disk-dir", "", "if set, also run -disk-ns on this (disk) filesystem")
	flagDiskNs       = flag.String("disk-ns", "1000", "node counts for the disk pass")
	flagDiskTools    = flag.String("disk-tools", "multi,start-stop-daemon,supervisord", "tools for the disk pass")
	flagCeleryMax    = flag.Int("celery-max", 100, "largest N for celery multi (each worker is a ~40 MiB Python process)")
	flagCeleryRounds = flag.Int("celery-rounds", 1, "rounds for celery multi (it sleeps 2s between polls)")
	flagCostN        = flag.Int("cost-n", 1000, "nodes for the cost pass (nodes that take -cost-delay to stop); 0 skips it")
	flagCostDelay    = flag.Duration("cost-delay", 10*time.Second, "how long each node of the cost pass takes to stop")
	flagCostTools    = flag.String("cost-tools", "multi,multi-notify,start-stop-daemon,supervisord", "tools for the cost pass")
	flagAppDir       = flag.String("app", "testdata/bench", "folder of benchapp.py, the broker-less celery app")
	flagOut          = flag.String("out", "testdata/bench/out", "folder for results.tsv, table.md and bench.png")
	flagPNG          = flag.String("png", "", "where to write the plot (default OUT/bench.png)")
	flagSettle       = flag.Duration("settle", 300*time.Millisecond, "pause after start, before stopwait")
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "slownode" {
		slowNode(os.Args[2:])
		return
	}
	flag.Parse()
	os.Exit(mainErr())
}

// slowNode is a node that, on SIGTERM, takes a while to stop: the cost
// pass's nodes. It exits by itself after ten minutes, so that nothing
// outlives a broken run for long.
func slowNode(args []string) {
	d := 10 * time.Second
	if len(args) > 0 {
		if v, err := time.ParseDuration(args[0]); err == nil {
			d = v
		}
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM)
	select {
	case <-sigs:
		time.Sleep(d)
		os.Exit(0)
	case <-time.After(10 * time.Minute):
		os.Exit(3)
	}
}

func mainErr() (code int) {
	if err := becomeSubreaper(); err != nil {
		fmt.Fprintln(os.Stderr, "driver:", err)
		return 1
	}
	base, err := baseDir(*flagDir)
	if err != nil {
		fmt.Fprintln(os.Stderr, "driver:", err)
		return 1
	}
	// Whatever happens, kill what is left and remove the run folders.
	var bases []string
	cleanup := func() {
		if n := cleanupAll(); n > 0 {
			fmt.Fprintf(os.Stderr, "driver: cleanup killed %d leftover processes\n", n)
		}
		for _, b := range bases {
			os.RemoveAll(b)
		}
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	go func() {
		s := <-sigs
		fmt.Fprintf(os.Stderr, "\ndriver: %v: cleaning up\n", s)
		cleanup()
		os.Exit(130)
	}()
	defer func() {
		if r := recover(); r != nil {
			fmt.Fprintln(os.Stderr, "driver: panic:", r)
			code = 1
		}
		cleanup()
	}()
	bases = append(bases, base)

	multiBin, err := filepath.Abs(*flagMulti)
	if err != nil {
		fmt.Fprintln(os.Stderr, "driver:", err)
		return 1
	}
	self, _ := os.Executable()
	appDir, _ := filepath.Abs(*flagAppDir)
	limits := raiseLimits(maxOf(parseNs(*flagNs)) + maxOf(parseNs(*flagDiskNs)) + *flagCostN)

	tools := map[string]tool{
		"multi":             multiTool("multi", multiBin),
		"multi-notify":      multiTool("multi --wait=notify", multiBin, "--wait=notify"),
		"start-stop-daemon": ssdTool(),
		"supervisord":       supervisordTool(),
		"celery":            celeryTool(appDir, *flagCeleryMax, *flagCeleryRounds),
	}
	pick := func(list string) []tool {
		var out []tool
		for _, name := range splitList(list) {
			t, ok := tools[name]
			if !ok {
				fmt.Fprintf(os.Stderr, "driver: unknown tool %q\n", name)
				os.Exit(2)
			}
			out = append(out, t)
		}
		return out
	}

	var rows []row
	sleep := []string{"/bin/sleep", "300"}
	fmt.Fprintf(os.Stderr, "driver: runs in %s (%s)\n", base, fsType(base))
	rows = append(rows, section("main", base, parseNs(*flagNs), *flagRounds, pick(*flagTools), sleep, false)...)
	if *flagDiskDir != "" {
		disk, err := os.MkdirTemp(*flagDiskDir, "multi-bench-")
		if err != nil {
			fmt.Fprintln(os.Stderr, "driver:", err)
			return 1
		}
		bases = append(bases, disk)
		fmt.Fprintf(os.Stderr, "driver: disk pass in %s (%s)\n", disk, fsType(disk))
		rows = append(rows, section("disk", disk, parseNs(*flagDiskNs), *flagRounds, pick(*flagDiskTools), sleep, false)...)
	}
	if *flagCostN > 0 {
		slow := []string{self, "slownode", flagCostDelay.String()}
		rows = append(rows, section("cost", base, []int{*flagCostN}, 1, pick(*flagCostTools), slow, true)...)
	}

	if err := os.MkdirAll(*flagOut, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, "driver:", err)
		return 1
	}
	writeTSV(filepath.Join(*flagOut, "results.tsv"), rows)
	var md strings.Builder
	report(&md, rows, limits, base, *flagDiskDir)
	os.WriteFile(filepath.Join(*flagOut, "table.md"), []byte(md.String()), 0o644)
	fmt.Print(md.String())
	png := *flagPNG
	if png == "" {
		png = filepath.Join(*flagOut, "bench.png")
	}
	if err := plot(rows, *flagOut, png); err != nil {
		fmt.Fprintln(os.Stderr, "driver: plot:", err)
	} else {
		fmt.Fprintf(os.Stderr, "driver: plot written to %s\n", png)
	}
	for _, r := range rows {
		if r.err != "" {
			return 1
		}
	}
	return 0
}

// A row is one measured run.
type row struct {
	section   string
	fs        string
	n         int
	round     int
	tool      string
	start     time.Duration
	stopwait  time.Duration
	overhead  time.Duration // stopwait's return minus the last node's death
	aliveRet  int           // nodes still alive when stopwait returned
	rss       int64         // KiB
	startCPU  time.Duration
	stopCPU   time.Duration
	helpers   int     // processes besides the nodes that stay running
	busy      float64 // the machine's CPU use just before the run
	leftovers int     // processes killed after the run
	err       string
}

// section runs every tool on every N, for each round, rotating the order of
// the tools from round to round.
func section(name, base string, ns []int, rounds int, tools []tool, node []string, slow bool) []row {
	var rows []row
	fs := fsType(base)
	for round := 1; round <= rounds; round++ {
		for _, n := range ns {
			for k := range tools {
				t := tools[(k+round-1)%len(tools)]
				if (t.maxN > 0 && n > t.maxN) || (t.rounds > 0 && round > t.rounds) {
					continue
				}
				dir := filepath.Join(base, fmt.Sprintf("%s-%s-n%d-r%d", name, slug(t.name), n, round))
				r := measure(t, &job{n: n, dir: dir, node: node, slow: slow})
				r.section, r.fs, r.round = name, fs, round
				rows = append(rows, r)
				status := "ok"
				if r.err != "" {
					status = "ERROR " + r.err
				}
				fmt.Fprintf(os.Stderr, "%-5s r%d N=%-5d %-22s start %8.3fs  stopwait %8.3fs  overhead %9.3fms  rss %6.1fMiB  busy %3.0f%%  %s\n",
					name, round, n, t.name, r.start.Seconds(), r.stopwait.Seconds(), ms(r.overhead), float64(r.rss)/1024, 100*r.busy, status)
			}
		}
	}
	return rows
}

func measure(t tool, j *job) (r row) {
	r.n, r.tool = j.n, t.name
	if err := os.MkdirAll(j.dir, 0o755); err != nil {
		r.err = err.Error()
		return r
	}
	r.busy = cpuBusy(*flagSettle)
	s, err := t.start(j)
	defer func() {
		if t.finish != nil {
			t.finish(j, s)
		}
		if s != nil {
			killPids(s.pids)
		}
		if n := cleanupAll(); n > 0 {
			r.leftovers = n
			if r.err == "" {
				r.err = fmt.Sprintf("%d processes left running", n)
			}
		}
	}()
	if err != nil {
		r.err = "start: " + err.Error()
		return r
	}
	r.start, r.rss, r.startCPU = s.wall, s.rss, s.cpu
	nodes := map[int]bool{}
	for _, pid := range s.pids {
		nodes[pid] = true
	}
	for _, pid := range descendants(os.Getpid()) {
		if !nodes[pid] {
			r.helpers++
		}
	}
	time.Sleep(*flagSettle)
	w, err := watchDeaths(s.pids)
	if err != nil {
		r.err = "pidfd: " + err.Error()
		return r
	}
	defer w.close()
	if w.early > 0 {
		r.err = fmt.Sprintf("%d nodes died before stopwait", w.early)
		return r
	}
	st, err := t.stop(j, s)
	if st != nil {
		r.stopwait = st.end.Sub(st.begin)
		r.rss = max(r.rss, st.rss)
		r.stopCPU = st.cpu
	}
	last, still := w.wait(60 * time.Second)
	if err != nil {
		r.err = "stopwait: " + err.Error()
		return r
	}
	if still > 0 {
		r.err = fmt.Sprintf("%d nodes still alive 60s after stopwait", still)
		return r
	}
	r.overhead = st.end.Sub(last)
	r.aliveRet = w.aliveAt(st.end)
	if r.aliveRet > 0 {
		r.err = fmt.Sprintf("stopwait returned with %d nodes alive", r.aliveRet)
	}
	return r
}

// raiseLimits raises the open-file limit for the driver and everything it
// starts (supervisord wants ~4 descriptors a program, multi ~2 a node), and
// returns the limits in force, for the report.
func raiseLimits(maxN int) string {
	var rl unix.Rlimit
	unix.Getrlimit(unix.RLIMIT_NOFILE, &rl)
	want := uint64(8*maxN + 4096)
	if rl.Max < want {
		if b, err := os.ReadFile("/proc/sys/fs/nr_open"); err == nil {
			if nr, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64); err == nil && want > nr {
				want = nr
			}
		}
		nl := unix.Rlimit{Cur: want, Max: want}
		if unix.Setrlimit(unix.RLIMIT_NOFILE, &nl) == nil {
			rl = nl
		}
	}
	if rl.Cur < rl.Max {
		rl.Cur = rl.Max
		unix.Setrlimit(unix.RLIMIT_NOFILE, &rl)
	}
	unix.Getrlimit(unix.RLIMIT_NOFILE, &rl)
	var np unix.Rlimit
	unix.Getrlimit(unix.RLIMIT_NPROC, &np)
	read := func(p string) string {
		b, err := os.ReadFile(p)
		if err != nil {
			return "?"
		}
		return strings.TrimSpace(string(b))
	}
	pidsMax := read("/sys/fs/cgroup/pids.max")
	if pidsMax == "?" {
		pidsMax = read("/sys/fs/cgroup/pids/pids.max")
	}
	return fmt.Sprintf("RLIMIT_NOFILE %d (soft and hard, as far as the driver could raise them), RLIMIT_NPROC %d, kernel.pid_max %s, kernel.threads-max %s, cgroup pids.max %s",
		rl.Cur, np.Cur, read("/proc/sys/kernel/pid_max"), read("/proc/sys/kernel/threads-max"), pidsMax)
}

func baseDir(dir string) (string, error) {
	if dir == "" {
		dir = os.TempDir()
		if fsType("/dev/shm") == "tmpfs" {
			dir = "/dev/shm"
		}
	}
	return os.MkdirTemp(dir, "multi-bench-")
}

func fsType(path string) string {
	var st unix.Statfs_t
	if err := unix.Statfs(path, &st); err != nil {
		return "?"
	}
	switch st.Type {
	case unix.TMPFS_MAGIC:
		return "tmpfs"
	case unix.EXT4_SUPER_MAGIC:
		return "ext4"
	case unix.XFS_SUPER_MAGIC:
		return "xfs"
	case unix.BTRFS_SUPER_MAGIC:
		return "btrfs"
	case unix.OVERLAYFS_SUPER_MAGIC:
		return "overlay"
	}
	return fmt.Sprintf("fs %#x", st.Type)
}

func parseNs(s string) []int {
	var out []int
	for _, f := range splitList(s) {
		if n, err := strconv.Atoi(f); err == nil && n > 0 {
			out = append(out, n)
		}
	}
	return out
}

func splitList(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' })
}

func maxOf(ns []int) int {
	m := 0
	for _, n := range ns {
		m = max(m, n)
	}
	return m
}

func slug(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			return r
		}
		return '-'
	}, strings.ToLower(s))
}

func ms(d time.Duration) float64 { return float64(d) / 1e6 }

func median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func writeTSV(path string, rows []row) {
	var b strings.Builder
	b.WriteString("section\tfs\tn\tround\ttool\tstart_s\tstopwait_s\toverhead_ms\trss_kib\tstart_cpu_s\tstop_cpu_s\thelpers\tbusy\terror\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "%s\t%s\t%d\t%d\t%s\t%.6f\t%.6f\t%.3f\t%d\t%.3f\t%.3f\t%d\t%.2f\t%s\n",
			r.section, r.fs, r.n, r.round, r.tool, r.start.Seconds(), r.stopwait.Seconds(), ms(r.overhead),
			r.rss, r.startCPU.Seconds(), r.stopCPU.Seconds(), r.helpers, r.busy, r.err)
	}
	os.WriteFile(path, []byte(b.String()), 0o644)
}

// A cell is the summary of one (section, N, tool) over its rounds.
type cell struct {
	section, fs, tool         string
	n, rounds, errs           int
	start, stopwait, overhead time.Duration // medians
	overheadMin, overheadMax  time.Duration
	startMin, startMax        time.Duration
	rss                       int64 // max
	stopCPU                   time.Duration
	helpers                   int
	busy                      float64
}

func summarize(rows []row) []cell {
	type key struct {
		section, tool string
		n             int
	}
	var order []key
	groups := map[key][]row{}
	for _, r := range rows {
		k := key{r.section, r.tool, r.n}
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], r)
	}
	sectionRank := map[string]int{"main": 0, "disk": 1, "cost": 2}
	rank := func(t string) int {
		return map[string]int{"multi": 0, "multi --wait=notify": 1, "start-stop-daemon": 2, "supervisord": 3, "celery multi": 4}[t]
	}
	sort.SliceStable(order, func(i, j int) bool {
		a, b := order[i], order[j]
		if a.section != b.section {
			return sectionRank[a.section] < sectionRank[b.section]
		}
		if a.n != b.n {
			return a.n < b.n
		}
		return rank(a.tool) < rank(b.tool)
	})
	var out []cell
	for _, k := range order {
		c := cell{section: k.section, tool: k.tool, n: k.n, overheadMin: math.MaxInt64, startMin: math.MaxInt64}
		var starts, stops, overs, cpus []time.Duration
		for _, r := range groups[k] {
			c.fs = r.fs
			c.busy = max(c.busy, r.busy)
			if r.err != "" {
				c.errs++
				continue
			}
			c.rounds++
			starts = append(starts, r.start)
			stops = append(stops, r.stopwait)
			overs = append(overs, r.overhead)
			cpus = append(cpus, r.stopCPU)
			c.rss = max(c.rss, r.rss)
			c.helpers = max(c.helpers, r.helpers)
			c.overheadMin, c.overheadMax = min(c.overheadMin, r.overhead), max(c.overheadMax, r.overhead)
			c.startMin, c.startMax = min(c.startMin, r.start), max(c.startMax, r.start)
		}
		c.start, c.stopwait, c.overhead, c.stopCPU = median(starts), median(stops), median(overs), median(cpus)
		out = append(out, c)
	}
	return out
}

func report(w io.Writer, rows []row, limits, base, diskDir string) {
	cells := summarize(rows)
	host, _ := os.Hostname()
	fmt.Fprintf(w, "## multi and its peers, %s\n\n", time.Now().Format("2006-01-02 15:04"))
	fmt.Fprintf(w, "Machine: %s, %d CPUs, %s. Limits: %s.\n\n", host, numCPU(), kernel(), limits)
	ssd := map[[2]string]time.Duration{}
	for _, c := range cells {
		if c.tool == "start-stop-daemon" {
			ssd[[2]string{c.section, strconv.Itoa(c.n)}] = c.start
		}
	}
	for _, sec := range []string{"main", "disk"} {
		var cs []cell
		for _, c := range cells {
			if c.section == sec {
				cs = append(cs, c)
			}
		}
		if len(cs) == 0 {
			continue
		}
		if sec == "main" {
			fmt.Fprintf(w, "### start and stopwait of N `sleep 300` nodes (files on %s); medians over rounds\n\n", cs[0].fs)
		} else {
			fmt.Fprintf(w, "### the same on a disk filesystem (%s, %s)\n\n", diskDir, cs[0].fs)
		}
		fmt.Fprintln(w, "| N | tool | rounds | start (s) | per node (ms) | start ÷ ssd | stopwait (s) | wait overhead (ms) | overhead min–max (ms) | peak RSS (MiB) | helpers |")
		fmt.Fprintln(w, "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
		for _, c := range cs {
			ratio := "–"
			if s := ssd[[2]string{c.section, strconv.Itoa(c.n)}]; s > 0 && c.rounds > 0 {
				ratio = fmt.Sprintf("%.2f", float64(c.start)/float64(s))
			}
			rounds := strconv.Itoa(c.rounds)
			if c.errs > 0 {
				rounds += fmt.Sprintf(" (+%d failed)", c.errs)
			}
			if c.rounds == 0 {
				fmt.Fprintf(w, "| %d | %s | %s | – | – | – | – | – | – | – | – |\n", c.n, c.tool, rounds)
				continue
			}
			fmt.Fprintf(w, "| %d | %s | %s | %.3f | %.2f | %s | %.3f | %s | %s–%s | %.1f | %d |\n",
				c.n, c.tool, rounds, c.start.Seconds(), ms(c.start)/float64(c.n), ratio, c.stopwait.Seconds(),
				fmtMs(c.overhead), fmtMs(c.overheadMin), fmtMs(c.overheadMax), float64(c.rss)/1024, c.helpers)
		}
		fmt.Fprintln(w)
	}
	var cost []cell
	for _, c := range cells {
		if c.section == "cost" {
			cost = append(cost, c)
		}
	}
	if len(cost) > 0 {
		fmt.Fprintf(w, "### cost: %d nodes that take %s to stop after SIGTERM\n\n", cost[0].n, flagCostDelay.String())
		fmt.Fprintln(w, "| tool | stopwait (s) | wait overhead (ms) | CPU while waiting (s) | CPU (% of one core) | peak RSS (MiB) | helpers |")
		fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|---:|")
		for _, c := range cost {
			if c.rounds == 0 {
				fmt.Fprintf(w, "| %s | failed | | | | | |\n", c.tool)
				continue
			}
			fmt.Fprintf(w, "| %s | %.3f | %s | %.3f | %.2f | %.1f | %d |\n", c.tool, c.stopwait.Seconds(), fmtMs(c.overhead),
				c.stopCPU.Seconds(), 100*c.stopCPU.Seconds()/c.stopwait.Seconds(), float64(c.rss)/1024, c.helpers)
		}
		fmt.Fprintln(w)
	}
	var errs []string
	for _, r := range rows {
		if r.err != "" {
			errs = append(errs, fmt.Sprintf("- %s r%d N=%d %s: %s", r.section, r.round, r.n, r.tool, r.err))
		}
	}
	if len(errs) > 0 {
		fmt.Fprintf(w, "### failed runs\n\n%s\n\n", strings.Join(errs, "\n"))
	}
	busy := 0.0
	for _, r := range rows {
		busy = max(busy, r.busy)
	}
	if busy > 0.2 {
		fmt.Fprintf(w, "Warning: the machine was up to %.0f%% busy just before some runs: other work was running.\n\n", 100*busy)
	}
}

func fmtMs(d time.Duration) string {
	v := ms(d)
	switch {
	case math.Abs(v) < 1:
		return fmt.Sprintf("%.3f", v)
	case math.Abs(v) < 100:
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.0f", v)
}

func numCPU() int {
	var set unix.CPUSet
	if unix.SchedGetaffinity(0, &set) == nil {
		return set.Count()
	}
	return 0
}

func kernel() string {
	var u unix.Utsname
	if unix.Uname(&u) != nil {
		return "?"
	}
	return "Linux " + unix.ByteSliceToString(u.Release[:])
}

// plot writes start and stopwait (medians) against N for each tool of the
// main section, with gnuplot.
func plot(rows []row, out, png string) error {
	cells := summarize(rows)
	byTool := map[string][]cell{}
	var tools []string
	for _, c := range cells {
		if c.section != "main" || c.rounds == 0 {
			continue
		}
		if _, ok := byTool[c.tool]; !ok {
			tools = append(tools, c.tool)
		}
		byTool[c.tool] = append(byTool[c.tool], c)
	}
	if len(tools) == 0 {
		return fmt.Errorf("nothing to plot")
	}
	var plots [2][]string
	for _, t := range tools {
		var b strings.Builder
		b.WriteString("# N start_s stopwait_s\n")
		for _, c := range byTool[t] {
			fmt.Fprintf(&b, "%d %.6f %.6f\n", c.n, c.start.Seconds(), c.stopwait.Seconds())
		}
		dat, _ := filepath.Abs(filepath.Join(out, "plot-"+slug(t)+".dat"))
		if err := os.WriteFile(dat, []byte(b.String()), 0o644); err != nil {
			return err
		}
		plots[0] = append(plots[0], fmt.Sprintf("'%s' using 1:2 with linespoints lw 2 title '%s'", dat, t))
		plots[1] = append(plots[1], fmt.Sprintf("'%s' using 1:3 with linespoints lw 2 title '%s'", dat, t))
	}
	pngAbs, _ := filepath.Abs(png)
	gp := fmt.Sprintf(`set terminal pngcairo size 1400,560 font ",11"
set output '%s'
set multiplot layout 1,2 title "multi and its peers on this machine (%d CPUs), medians; %s"
set logscale xy
set grid
set key top left
set xlabel "nodes (N)"
set ylabel "seconds"
set format y "%%g"
set title "start: N nodes started and confirmed"
plot %s
set title "stopwait: SIGTERM to N nodes, wait until all are gone"
plot %s
unset multiplot
`, pngAbs, numCPU(), time.Now().Format("2006-01-02"), strings.Join(plots[0], ", "), strings.Join(plots[1], ", "))
	script := filepath.Join(out, "plot.gp")
	if err := os.WriteFile(script, []byte(gp), 0o644); err != nil {
		return err
	}
	_, _, _, err := run([]string{"gnuplot", script}, spawnOpts{env: peerEnv(), capture: true})
	return err
}
