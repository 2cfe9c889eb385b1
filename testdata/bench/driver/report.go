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
)

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

// writeTSV writes every run, one a line, after the run's record (lines
// starting with "#").
func writeTSV(path string, rows []row, m meta) {
	var b strings.Builder
	for _, l := range m.lines() {
		b.WriteString("# " + l + "\n")
	}
	b.WriteString("section\tfs\tn\tround\ttool\tstart_s\tboot_s\tstopwait_s\toverhead_ms\trss_kib\tstart_cpu_s\tstop_cpu_s\thelpers\tbusy\terror\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "%s\t%s\t%d\t%d\t%s\t%.6f\t%.6f\t%.6f\t%.3f\t%d\t%.3f\t%.3f\t%d\t%.2f\t%s\n",
			r.section, r.fs, r.n, r.round, r.tool, r.start.Seconds(), r.boot.Seconds(), r.stopwait.Seconds(), ms(r.overhead),
			r.rss, r.startCPU.Seconds(), r.stopCPU.Seconds(), r.helpers, r.busy, r.err)
	}
	os.WriteFile(path, []byte(b.String()), 0o644)
}

// A cell is the summary of one (section, N, tool) over its rounds.
type cell struct {
	section, fs, tool         string
	n, rounds, errs           int
	start, stopwait, overhead time.Duration // medians
	boot                      time.Duration // median
	overheadMin, overheadMax  time.Duration
	startMin, startMax        time.Duration
	rss                       int64 // max
	stopCPU                   time.Duration
	helpers                   int
	busy                      float64
}

// groupBy groups rows by key, and returns the keys in the order each was
// first seen.
func groupBy[K comparable, R any](rows []R, key func(R) K) ([]K, map[K][]R) {
	var order []K
	groups := map[K][]R{}
	for _, r := range rows {
		k := key(r)
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], r)
	}
	return order, groups
}

func summarize(rows []row) []cell {
	type key struct {
		section, tool string
		n             int
	}
	order, groups := groupBy(rows, func(r row) key { return key{r.section, r.tool, r.n} })
	sectionRank := map[string]int{"main": 0, "disk": 1, "cost": 2}
	rank := func(t string) int {
		return map[string]int{"multi": 0, "multi --settle=0": 1, "multi --wait=notify": 2, "s6": 3, "start-stop-daemon -P": 4, "start-stop-daemon": 5, "supervisord": 6, "celery multi": 7,
			"multi session": 8, "multi --wait=notify session": 9, "multi --ready=notify": 10, "multi --ready=fd:3": 11, "s6 notification-fd": 12}[t]
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
		var starts, stops, overs, cpus, boots []time.Duration
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
			boots = append(boots, r.boot)
			c.rss = max(c.rss, r.rss)
			c.helpers = max(c.helpers, r.helpers)
			c.overheadMin, c.overheadMax = min(c.overheadMin, r.overhead), max(c.overheadMax, r.overhead)
			c.startMin, c.startMax = min(c.startMin, r.start), max(c.startMax, r.start)
		}
		c.start, c.stopwait, c.overhead, c.stopCPU, c.boot = median(starts), median(stops), median(overs), median(cpus), median(boots)
		out = append(out, c)
	}
	return out
}

// bestPeers are the peers "start ÷ best peer" compares with: the fastest
// start among them in the same run, N and folder.
var bestPeers = map[string]bool{"s6": true, "start-stop-daemon -P": true}

func report(w io.Writer, rows []row, m meta, diskDir string) {
	cells := summarize(rows)
	fmt.Fprintf(w, "## multi and its peers, %s\n\n", m.date.Format("2006-01-02 15:04 MST"))
	for _, l := range m.lines() {
		fmt.Fprintf(w, "- %s\n", l)
	}
	fmt.Fprintln(w)
	best := bestPeerStarts(cells)
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
		fmt.Fprintln(w, "| N | tool | rounds | start (s) | per node (ms) | start ÷ best peer | stopwait (s) | wait overhead (ms) | overhead min–max (ms) | boot (s) | peak RSS (MiB) | helpers |")
		fmt.Fprintln(w, "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
		for _, c := range cs {
			ratio := "–"
			if s := best[bestKey(c)]; s > 0 && c.rounds > 0 {
				ratio = fmt.Sprintf("%.2f", float64(c.start)/float64(s))
			}
			rounds := strconv.Itoa(c.rounds)
			if c.errs > 0 {
				rounds += fmt.Sprintf(" (+%d failed)", c.errs)
			}
			if c.rounds == 0 {
				fmt.Fprintf(w, "| %d | %s | %s | – | – | – | – | – | – | – | – | – |\n", c.n, c.tool, rounds)
				continue
			}
			boot := "–"
			if c.boot > 0 {
				boot = fmt.Sprintf("%.3f", c.boot.Seconds())
			}
			fmt.Fprintf(w, "| %d | %s | %s | %.3f | %.2f | %s | %.3f | %s | %s–%s | %s | %.1f | %d |\n",
				c.n, c.tool, rounds, c.start.Seconds(), ms(c.start)/float64(c.n), ratio, c.stopwait.Seconds(),
				fmtMs(c.overhead), fmtMs(c.overheadMin), fmtMs(c.overheadMax), boot, float64(c.rss)/1024, c.helpers)
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
	targets(w, cells, best)
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

type cellKey struct {
	section string
	n       int
}

func bestKey(c cell) cellKey { return cellKey{c.section, c.n} }

// bestPeerStarts is, per section and N, the fastest median start among the
// best peers.
func bestPeerStarts(cells []cell) map[cellKey]time.Duration {
	best := map[cellKey]time.Duration{}
	for _, c := range cells {
		if !bestPeers[c.tool] || c.rounds == 0 {
			continue
		}
		if b, ok := best[bestKey(c)]; !ok || c.start < b {
			best[bestKey(c)] = c.start
		}
	}
	return best
}

// targets prints the targets start and stop are held to
// (docs/benchmarks.md), each with the value this run measured and whether
// it was met.
func targets(w io.Writer, cells []cell, best map[cellKey]time.Duration) {
	find := func(section, tool string, n int) (cell, bool) {
		for _, c := range cells {
			if c.section == section && c.tool == tool && c.n == n && c.rounds > 0 {
				return c, true
			}
		}
		return cell{}, false
	}
	folder := map[string]string{"main": "tmpfs", "disk": "disk"}
	for _, c := range cells {
		if c.section == "disk" {
			folder["disk"] = c.fs
			break
		}
	}
	fmt.Fprintln(w, "### targets (issue 15), from this run")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| target | measured | met? |")
	fmt.Fprintln(w, "|---|---:|---|")
	line := func(target, measured string, ok, have bool) {
		verdict := "not measured"
		if have {
			verdict = map[bool]string{true: "met", false: "**not met**"}[ok]
		}
		fmt.Fprintf(w, "| %s | %s | %s |\n", target, measured, verdict)
	}
	for _, t := range []struct {
		section string
		limit   time.Duration
	}{{"main", 800 * time.Millisecond}, {"disk", 1200 * time.Millisecond}} {
		// multi's own default (with the settle window), and without it.
		for _, tool := range []string{"multi", "multi --settle=0"} {
			c, ok := find(t.section, tool, 1000)
			line(fmt.Sprintf("start of 1000, %s, ≤ %.1f s (%s)", folder[t.section], t.limit.Seconds(), tool),
				fmt.Sprintf("%.3f s", c.start.Seconds()), c.start <= t.limit, ok)
			b := best[cellKey{t.section, 1000}]
			r := 0.0
			if b > 0 {
				r = float64(c.start) / float64(b)
			}
			line(fmt.Sprintf("start of 1000, %s, ≤ 0.6 × best peer (%.3f s) (%s)", folder[t.section], b.Seconds(), tool),
				fmt.Sprintf("%.2f ×", r), r <= 0.6, ok && b > 0)
		}
	}
	for _, tool := range []string{"multi", "multi --wait=notify"} {
		c, ok := find("main", tool, 1000)
		line(fmt.Sprintf("stopwait of 1000, tmpfs, ≤ 0.12 s (%s)", tool), fmt.Sprintf("%.3f s", c.stopwait.Seconds()),
			c.stopwait <= 120*time.Millisecond, ok)
	}
	for _, sec := range []string{"main", "disk"} {
		for _, tool := range []string{"multi", "multi --wait=notify"} {
			for _, t := range []struct {
				n     int
				limit time.Duration
			}{{1, time.Millisecond}, {1000, 5 * time.Millisecond}} {
				c, ok := find(sec, tool, t.n)
				line(fmt.Sprintf("wait overhead, N=%d, %s, ≤ %s ms (%s)", t.n, folder[sec], fmtMs(t.limit), tool),
					fmt.Sprintf("%s ms (%s–%s)", fmtMs(c.overhead), fmtMs(c.overheadMin), fmtMs(c.overheadMax)), c.overhead <= t.limit, ok)
			}
		}
	}
	for _, tool := range []string{"multi", "multi --wait=notify"} {
		var c cell
		ok := false
		for _, x := range cells {
			if x.section == "cost" && x.tool == tool && x.rounds > 0 {
				c, ok = x, true
			}
		}
		pct := 0.0
		if ok && c.stopwait > 0 {
			pct = 100 * c.stopCPU.Seconds() / c.stopwait.Seconds()
		}
		line(fmt.Sprintf("CPU while waiting on %d slow nodes ≤ 1%% of a core (%s)", c.n, tool),
			fmt.Sprintf("%.2f %%", pct), pct <= 1, ok)
	}
	for _, sec := range []string{"main", "disk"} {
		for _, tool := range []string{"multi", "multi --wait=notify"} {
			c, ok := find(sec, tool, 1000)
			line(fmt.Sprintf("peak RSS at 1000, %s, ≤ 15 MiB (%s)", folder[sec], tool),
				fmt.Sprintf("%.1f MiB", float64(c.rss)/1024), c.rss <= 15*1024, ok)
		}
	}
	fmt.Fprintln(w)
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
