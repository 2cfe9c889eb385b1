package multi

import "context"

// Restart stopwaits every running node (as [Cluster.StopWait]) and then
// starts each node again with its command; a node that was not running is
// just started.
func (c *Cluster) Restart(ctx context.Context) ([]Result, error) {
	results := c.results()
	if !c.makeRunDir("restart", results) {
		// Nothing could be started again: nothing is stopped either.
		return results, joinErrs(results)
	}
	was := make([]bool, len(results))
	c.stopWait(ctx, results, stopOpts{op: "restart", sig: c.signal(), timeout: c.Timeout, was: was})
	c.startAll(ctx, results, func(i int) (string, bool) {
		// A node that could not be stopped is not started twice.
		if results[i].Err != nil {
			return "", false
		}
		if was[i] {
			return "restarted", true
		}
		return "started", true
	})
	return results, joinErrs(results)
}
