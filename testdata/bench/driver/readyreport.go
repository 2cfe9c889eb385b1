//go:build linux

package main

import (
	"fmt"
	"io"
)

// reportReady writes the rows of issues 21 and 22: the ready tail, multi
// with --ready against s6 with notification-fd, and multi with and without
// cgroups.
func reportReady(w io.Writer, rows []row, tails []tailRow) {
	reportTail(w, tails)
	cells := summarize(rows)
	find := func(section, tool string, n int) (cell, bool) {
		for _, c := range cells {
			if c.section == section && c.tool == tool && c.n == n && c.rounds > 0 {
				return c, true
			}
		}
		return cell{}, false
	}
	var ns []int
	seen := map[int]bool{}
	for _, c := range cells {
		if c.section == "main" && !seen[c.n] {
			seen[c.n] = true
			ns = append(ns, c.n)
		}
	}

	// Started means ready: until every node is up and has said so.
	header := false
	for _, n := range ns {
		s6, ok := find("main", "s6 notification-fd", n)
		if !ok {
			continue
		}
		for _, tool := range []string{"multi --ready=notify", "multi --ready=fd:3"} {
			c, ok := find("main", tool, n)
			if !ok {
				continue
			}
			if !header {
				fmt.Fprintln(w, "### start until every node is ready: multi --ready against s6 with notification-fd (same folder, same sitting)")
				fmt.Fprintln(w)
				fmt.Fprintln(w, "| N | multi | multi start (s) | s6 start (s) | multi ÷ s6 | target (N=1000) |")
				fmt.Fprintln(w, "|---:|---|---:|---:|---:|---|")
				header = true
			}
			ratio := c.start.Seconds() / s6.start.Seconds()
			target := "–"
			if n == 1000 {
				target = verdict(fmt.Sprintf("≤ 0.6 × s6: %.2f", ratio), ratio <= 0.6)
			}
			fmt.Fprintf(w, "| %d | %s | %.3f | %.3f | %.2f | %s |\n", n, tool, c.start.Seconds(), s6.start.Seconds(), ratio, target)
		}
	}
	if header {
		fmt.Fprintln(w)
	}

	// cgroups against none: each node in a cgroup of its own costs at
	// most 15% at start and at stopwait (N=1000).
	header = false
	for _, sec := range []string{"main", "disk"} {
		for _, n := range ns {
			for _, pair := range [][2]string{{"multi", "multi session"}, {"multi --wait=notify", "multi --wait=notify session"}} {
				cg, ok1 := find(sec, pair[0], n)
				ss, ok2 := find(sec, pair[1], n)
				if !ok1 || !ok2 {
					continue
				}
				if !header {
					fmt.Fprintln(w, "### cgroup per node against session containment (MULTI_CONTAINMENT=session)")
					fmt.Fprintln(w)
					fmt.Fprintln(w, "| folder | N | multi | start cgroup / session (s) | ÷ | stopwait cgroup / session (s) | ÷ | wait overhead cgroup / session (ms) | target (N=1000: ≤ 1.15×) |")
					fmt.Fprintln(w, "|---|---:|---|---:|---:|---:|---:|---:|---|")
					header = true
				}
				rs, rw := cg.start.Seconds()/ss.start.Seconds(), cg.stopwait.Seconds()/ss.stopwait.Seconds()
				target := "–"
				if n == 1000 {
					target = verdict(fmt.Sprintf("start %.2f, stopwait %.2f", rs, rw), rs <= 1.15 && rw <= 1.15)
				}
				fmt.Fprintf(w, "| %s | %d | %s | %.3f / %.3f | %.2f | %.3f / %.3f | %.2f | %s / %s | %s |\n",
					cg.fs, n, pair[0], cg.start.Seconds(), ss.start.Seconds(), rs, cg.stopwait.Seconds(), ss.stopwait.Seconds(), rw,
					fmtMs(cg.overhead), fmtMs(ss.overhead), target)
			}
		}
	}
	if header {
		fmt.Fprintln(w)
	}
}

func verdict(what string, ok bool) string {
	if ok {
		return what + ": met"
	}
	return what + ": **not met**"
}
