//go:build unix

package supervise

import (
	"fmt"
	"strings"

	"github.com/multi-launcher/multi/internal/cgroup"
)

// metrics is s in the Prometheus text format (version 0.0.4).
func metrics(s *healthState) string {
	var b strings.Builder
	b01 := func(v bool) int {
		if v {
			return 1
		}
		return 0
	}
	family := func(name, typ, help string, each func(n healthNode) (float64, bool)) {
		fmt.Fprintf(&b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, typ)
		for _, n := range s.nodes {
			if v, ok := each(n); ok {
				fmt.Fprintf(&b, "%s{node=\"%s\"} %g\n", name, labelEscape(n.name), v)
			}
		}
	}
	family("multi_node_up", "gauge", "Whether the node's process runs.", func(n healthNode) (float64, bool) { return float64(b01(n.up)), true })
	family("multi_node_ready", "gauge", "Whether the node runs and passed its readiness check.", func(n healthNode) (float64, bool) { return float64(b01(n.ready)), true })
	family("multi_node_fatal", "gauge", "Whether the node was left down by the crash-loop limit.", func(n healthNode) (float64, bool) { return float64(b01(n.fatal)), true })
	family("multi_node_restarts_total", "counter", "Restarts of the node by the run.", func(n healthNode) (float64, bool) { return float64(n.restarts), true })
	family("multi_node_exits_total", "counter", "Exits of the node's process on its own.", func(n healthNode) (float64, bool) { return float64(n.exits), true })
	family("multi_node_start_time_seconds", "gauge", "When the node's process started, in seconds since the epoch.", func(n healthNode) (float64, bool) {
		return float64(n.since.UnixNano()) / 1e9, n.up && !n.since.IsZero()
	})
	family("multi_node_last_exit_status", "gauge", "The last exit status of the node's process (128+N: killed by signal N).", func(n healthNode) (float64, bool) {
		return float64(n.lastExit), n.exits > 0
	})
	// What each node's cgroup counts, read now: OOM kills and limits hit.
	trees := make([]cgroup.Tree, len(s.nodes))
	for i, n := range s.nodes {
		if n.cgroup != "" {
			trees[i], _ = cgroup.Read(n.cgroup, s.rundir, n.name)
		}
	}
	fmt.Fprintf(&b, "# HELP multi_node_oom_kills_total Processes of the node's tree the kernel's OOM killer killed (memory.events oom_kill).\n# TYPE multi_node_oom_kills_total counter\n")
	for i, n := range s.nodes {
		if k := trees[i].OOMKills; k != nil {
			fmt.Fprintf(&b, "multi_node_oom_kills_total{node=\"%s\"} %d\n", labelEscape(n.name), *k)
		}
	}
	fmt.Fprintf(&b, "# HELP multi_node_limit_hits_total Times the node's tree ran into a cgroup limit: memory.max, memory.high, pids.max (their events' counts), cpu.max (throttled periods).\n# TYPE multi_node_limit_hits_total counter\n")
	for i, n := range s.nodes {
		for _, limit := range []string{"memory.max", "memory.high", "pids.max", "cpu.max"} {
			if v, ok := trees[i].Hits[limit]; ok {
				fmt.Fprintf(&b, "multi_node_limit_hits_total{node=\"%s\",limit=\"%s\"} %d\n", labelEscape(n.name), limit, v)
			}
		}
	}
	fmt.Fprintf(&b, "# HELP multi_run_ready Whether every node is ready.\n# TYPE multi_run_ready gauge\nmulti_run_ready %d\n", b01(s.ready))
	return b.String()
}

// labelEscape escapes a label value: backslash, double quote, newline.
func labelEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(s)
}
