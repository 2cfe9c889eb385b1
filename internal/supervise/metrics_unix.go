//go:build unix

package supervise

import (
	"fmt"
	"strings"
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
	fmt.Fprintf(&b, "# HELP multi_run_ready Whether every node is ready.\n# TYPE multi_run_ready gauge\nmulti_run_ready %d\n", b01(s.ready))
	return b.String()
}

// labelEscape escapes a label value: backslash, double quote, newline.
func labelEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(s)
}
