package cli

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/multi-launcher/multi/multi"
	"github.com/multi-launcher/multi/nodes"
)

// runReadyLog refuses a log: check under run without --logfile: run
// prints the nodes' output, and their logfiles stay empty.
func runReadyLog(cl *multi.Cluster, a *call) error {
	if logfileGiven(a) {
		return nil
	}
	for _, n := range cl.Nodes {
		if n.Ready.Kind == nodes.Log {
			return fmt.Errorf("%s: --ready=%s reads the node's logfile, which run writes only with --logfile", n.Name, n.Ready)
		}
	}
	return nil
}

// readyCode is status's exit code with --ready (only): 0 only when every
// node is running (code is 0) and none with a check fails it.
func readyCode(only bool, code int, sts []multi.Status) int {
	if !only || code != exitOK {
		return code
	}
	for _, s := range sts {
		if s.Ready != "" && s.Ready != multi.Ready {
			return exitFailed
		}
	}
	return code
}

// readyText is what a status line adds for a running node with a check:
// "; ready", "; starting: why", "; unready: why".
func (o *output) readyText(s multi.Status) string {
	text := ""
	switch {
	case s.Ready == "":
		return ""
	case s.ReadyErr == nil:
		text = "; " + o.paint(green, string(s.Ready))
	default:
		// The reason can quote what a server answered: escaped.
		text = "; " + o.paint(yellow, string(s.Ready)) + ": " + nodes.Printable(s.ReadyErr.Error())
	}
	if s.ReadyStatus != "" {
		text += " (STATUS=" + nodes.Printable(s.ReadyStatus) + ")"
	}
	return text
}

// checkLive refuses a --live check that is not a kind a running node can
// be asked (tcp, http, exec, file), naming the node.
func checkLive(cl *multi.Cluster, tmpl string) error {
	if tmpl == "" {
		return nil
	}
	for _, n := range cl.Nodes {
		c, err := nodes.ExpandReady(tmpl, n, "--live")
		if err != nil {
			return err
		}
		if !c.Kind.Probe() {
			return fmt.Errorf("%s: --live=%s: a liveness check is tcp, http, exec or file (notify, fd and log are seen only at start)", n.Name, nodes.Printable(c.String()))
		}
	}
	return nil
}

// readyWaits reports whether verb's start waits for readiness checks.
func readyWaits(verb string, ns []nodes.Node) bool {
	if verb != "start" && verb != "restart" {
		return false
	}
	for _, n := range ns {
		if n.Ready.Kind != "" {
			return true
		}
	}
	return false
}

// readyText is the progress line while start waits for readiness: the
// nodes still waited for, in the set's order.
func (p *progressLine) readyText(now time.Time) string {
	names := make([]string, 0, len(p.left))
	for n := range p.left {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool { return p.index[names[i]] < p.index[names[j]] })
	return fmt.Sprintf("%s: %d/%d ready, %.0fs; waiting for %s", p.verb, p.done, p.total, now.Sub(p.begin).Seconds(), strings.Join(names, " "))
}
