//go:build linux

// Command driver runs multi and its peers (s6, start-stop-daemon sequential
// and in parallel, supervisord, celery multi) on the same work, interleaved
// over several rounds, on a tmpfs folder and on a disk folder, and prints a
// table: N, tool, start, stopwait, wait overhead, daemon boot, peak RSS,
// start against the best peer, and the targets. It is the engine of
// `make bench` (testdata/bench/bench.sh); see docs/benchmarks.md.
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
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
)

var (
	flagMulti        = flag.String("multi", "bin/multi", "the multi binary")
	flagNs           = flag.String("n", "1,10,100,500,1000", "node counts, comma or space separated")
	flagRounds       = flag.Int("rounds", 3, "rounds; each round runs every tool on every N, interleaved")
	flagTools        = flag.String("tools", "multi,multi-settle0,multi-notify,multi-session,multi-notify-session,multi-ready-notify,multi-ready-fd,s6,s6-ready,start-stop-daemon,start-stop-daemon-P,supervisord,celery", "tools to run")
	flagDir          = flag.String("dir", "", "folder for the runs' pidfiles and logs (default: /dev/shm if it is a tmpfs, else the temp dir)")
	flagDiskDir      = flag.String("disk-dir", "", "if set, also run -disk-ns on this (disk) filesystem")
	flagDiskNs       = flag.String("disk-ns", "1,500,1000", "node counts for the disk pass")
	flagDiskTools    = flag.String("disk-tools", "", "tools for the disk pass (default: -tools without celery and the readiness rows)")
	flagCeleryMax    = flag.Int("celery-max", 100, "largest N for celery multi (each worker is a ~40 MiB Python process)")
	flagCeleryRounds = flag.Int("celery-rounds", 1, "rounds for celery multi (it sleeps 2s between polls)")
	flagCostN        = flag.Int("cost-n", 1000, "nodes for the cost pass (nodes that take -cost-delay to stop); 0 skips it")
	flagCostDelay    = flag.Duration("cost-delay", 10*time.Second, "how long each node of the cost pass takes to stop")
	flagCostTools    = flag.String("cost-tools", "multi,multi-notify,s6,start-stop-daemon,supervisord", "tools for the cost pass")
	flagAppDir       = flag.String("app", "testdata/bench", "folder of benchapp.py, the broker-less celery app")
	flagOut          = flag.String("out", "testdata/bench/out", "folder for results.tsv, table.md and bench.png")
	flagPNG          = flag.String("png", "", "where to write the plot (default OUT/bench.png)")
	flagSettle       = flag.Duration("settle", 300*time.Millisecond, "pause after start, before stopwait")
	flagPar          = flag.Int("par", 0, "parallel calls of start-stop-daemon -P and of s6-svc (default: 2 × CPUs)")
	flagS6Dir        = flag.String("s6-dir", "/dev/shm", "tmpfs folder for s6's scan directories")
	flagTailNs       = flag.String("tail-ns", "1,100,1000", "node counts of the ready tail (last READY=1 to start's return); empty skips it")
	flagReadyNode    = flag.String("readynode", "", "the readiness rows' node program, testdata/bench/readynode built (default: readynode beside the driver)")
	flagTailRounds   = flag.Int("tail-rounds", 5, "rounds of the ready tail")
	flagTailModes    = flag.String("tail-modes", "notify,fd:3", "the --ready checks of the ready tail")
	flagTailGaps     = flag.String("tail-gaps", "0,1ms", "the ready tail's spacing of the nodes' readies: 0 all at once, else one every gap")
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
		stopping.Store(true)
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
	readyBin := *flagReadyNode
	if readyBin == "" {
		readyBin = filepath.Join(filepath.Dir(self), "readynode")
	}
	readyBin, _ = filepath.Abs(readyBin)
	limits := raiseLimits(max(maxOf(parseNs(*flagNs))+maxOf(parseNs(*flagDiskNs))+*flagCostN, maxOf(parseNs(*flagTailNs))))

	par := *flagPar
	if par <= 0 {
		par = 2 * numCPU()
	}
	// s6's scan directories (its supervision state) are on a tmpfs always;
	// the nodes' logs go to the folder under test.
	s6Base, err := os.MkdirTemp(*flagS6Dir, "multi-bench-s6-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "driver:", err)
		return 1
	}
	bases = append(bases, s6Base)
	if fs := fsType(s6Base); fs != "tmpfs" {
		fmt.Fprintf(os.Stderr, "driver: warning: s6's scan directories are on %s, not tmpfs\n", fs)
	}
	tools := map[string]tool{
		"multi":         multiTool("multi", multiBin, nil, nil),
		"multi-settle0": multiTool("multi --settle=0", multiBin, []string{"--settle=0"}, nil),
		"multi-notify":  multiTool("multi --wait=notify", multiBin, nil, []string{"--wait=notify"}),
		// cgroup rows (issue 21): multi without cgroups, as a user who
		// cannot make one gets it.
		"multi-session":        multiTool("multi session", multiBin, nil, nil, "MULTI_CONTAINMENT=session"),
		"multi-notify-session": multiTool("multi --wait=notify session", multiBin, nil, []string{"--wait=notify"}, "MULTI_CONTAINMENT=session"),
		// readiness rows (issue 22): nodes that say they are ready.
		"multi-ready-notify":  withNode(multiTool("multi --ready=notify", multiBin, []string{"--ready=notify"}, nil), readyBin),
		"multi-ready-fd":      withNode(multiTool("multi --ready=fd:3", multiBin, []string{"--ready=fd:3"}, nil), readyBin, "-fd", "3"),
		"s6":                  s6Tool(s6Base, par, false),
		"s6-ready":            withNode(s6Tool(s6Base, par, true), readyBin, "-fd", "3"),
		"start-stop-daemon":   ssdTool(0),
		"start-stop-daemon-P": ssdTool(par),
		"supervisord":         supervisordTool(),
		"celery":              celeryTool(appDir, *flagCeleryMax, *flagCeleryRounds),
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

	diskTools := *flagDiskTools
	if diskTools == "" {
		var ts []string
		for _, t := range splitList(*flagTools) {
			// The readiness rows measure the wait for READY=1, not the
			// folder: the tmpfs pass has them.
			if t != "celery" && !strings.Contains(t, "-ready") {
				ts = append(ts, t)
			}
		}
		diskTools = strings.Join(ts, ",")
	}

	var rows []row
	sleep := []string{"/bin/sleep", "300"}
	began := time.Now()
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
		rows = append(rows, section("disk", disk, parseNs(*flagDiskNs), *flagRounds, pick(diskTools), sleep, false)...)
	}
	var tails []tailRow
	if ns := parseNs(*flagTailNs); len(ns) > 0 {
		fmt.Fprintf(os.Stderr, "driver: ready tail in %s\n", base)
		var gaps []time.Duration
		for _, g := range splitList(*flagTailGaps) {
			d, err := time.ParseDuration(g)
			if err != nil {
				fmt.Fprintf(os.Stderr, "driver: -tail-gaps: %v\n", err)
				return 2
			}
			gaps = append(gaps, d)
		}
		tails = readyTail(multiBin, readyBin, base, ns, *flagTailRounds, splitList(*flagTailModes), gaps)
	}
	if *flagCostN > 0 {
		slow := []string{self, "slownode", flagCostDelay.String()}
		rows = append(rows, section("cost", base, []int{*flagCostN}, 1, pick(*flagCostTools), slow, true)...)
	}

	if err := os.MkdirAll(*flagOut, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, "driver:", err)
		return 1
	}
	resolved := fmt.Sprintf("-par=%d -disk-tools=%q", par, diskTools)
	m := collectMeta(multiBin, base, *flagDiskDir, s6Base, limits, resolved, time.Since(began))
	writeTSV(filepath.Join(*flagOut, "results.tsv"), rows, m)
	var md strings.Builder
	if len(rows) > 0 {
		report(&md, rows, m, *flagDiskDir)
	} else {
		fmt.Fprintf(&md, "## readiness and cgroup rows, %s\n\n", m.date.Format("2006-01-02 15:04 MST"))
		for _, l := range m.lines() {
			fmt.Fprintf(&md, "- %s\n", l)
		}
		fmt.Fprintln(&md)
	}
	reportReady(&md, rows, tails)
	if len(tails) > 0 {
		writeTailTSV(filepath.Join(*flagOut, "tail.tsv"), tails, m)
	}
	os.WriteFile(filepath.Join(*flagOut, "table.md"), []byte(md.String()), 0o644)
	fmt.Print(md.String())
	png := *flagPNG
	if png == "" {
		png = filepath.Join(*flagOut, "bench.png")
	}
	if len(rows) == 0 {
		// only the ready tail: nothing to plot
	} else if err := plot(rows, *flagOut, png); err != nil {
		fmt.Fprintln(os.Stderr, "driver: plot:", err)
	} else {
		fmt.Fprintf(os.Stderr, "driver: plot written to %s\n", png)
	}
	for _, r := range rows {
		if r.err != "" {
			return 1
		}
	}
	for _, r := range tails {
		if r.err != "" {
			return 1
		}
	}
	return 0
}

// withNode gives t its own node argv.
func withNode(t tool, argv ...string) tool {
	t.node = argv
	return t
}

// A row is one measured run.
type row struct {
	section   string
	fs        string
	n         int
	round     int
	tool      string
	start     time.Duration
	boot      time.Duration // a daemon's start-up, not charged to start
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

// stopping is set on SIGINT/SIGTERM: no new run may start (and create its
// folder) while the cleanup removes them.
var stopping atomic.Bool

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
				if stopping.Load() {
					return rows
				}
				dir := filepath.Join(base, fmt.Sprintf("%s-%s-n%d-r%d", name, slug(t.name), n, round))
				argv := node
				if t.node != nil {
					argv = t.node
				}
				r := measure(t, &job{n: n, dir: dir, node: argv, slow: slow})
				r.section, r.fs, r.round = name, fs, round
				rows = append(rows, r)
				status := "ok"
				if r.err != "" {
					status = "ERROR " + r.err
				}
				fmt.Fprintf(os.Stderr, "%-5s r%d N=%-5d %-22s start %8.3fs  stopwait %8.3fs  overhead %9.3fms  boot %6.3fs  rss %6.1fMiB  busy %3.0f%%  %s\n",
					name, round, n, t.name, r.start.Seconds(), r.stopwait.Seconds(), ms(r.overhead), r.boot.Seconds(), float64(r.rss)/1024, 100*r.busy, status)
			}
		}
	}
	return rows
}

// deathSlack: see measure.
const deathSlack = 5 * time.Millisecond

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
		if err := cgroupLeft(j.dir); err != nil && r.err == "" {
			r.err = err.Error()
		}
	}()
	if err != nil {
		r.err = "start: " + err.Error()
		return r
	}
	r.start, r.boot, r.rss, r.startCPU = s.wall, s.boot, s.rss, s.cpu
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
	// Deaths are stamped by a thread that a busy machine can deschedule
	// for a few ms, so a node seen dead up to deathSlack after the tool's
	// return is taken as dead by then (the overhead column shows the
	// negative value); a tool that returns earlier than that is flagged.
	r.aliveRet = w.aliveAt(st.end.Add(deathSlack))
	if r.aliveRet > 0 {
		r.err = fmt.Sprintf("stopwait returned with %d nodes alive", r.aliveRet)
	}
	return r
}
