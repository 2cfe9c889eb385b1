package multi

import (
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/multi-launcher/multi/internal/record"
	"github.com/multi-launcher/multi/nodes"
)

// The order of nodes.Node.After: a verb on nodes some of which need
// others starts them wave by wave (each wave's nodes need only nodes of
// earlier waves), each node once what it needs has reached its
// condition, and stops them in the reverse order. Without any After a
// verb takes none of these paths.

// hasAfter reports whether a node of ns needs another.
func hasAfter(ns []nodes.Node) bool {
	return slices.ContainsFunc(ns, func(n nodes.Node) bool { return len(n.After) > 0 })
}

// A needGraph is the needs of a verb's nodes (its results), resolved.
type needGraph struct {
	edges [][]needEdge // each node's needs
	users [][]int      // the nodes of the set that need each node
	waves [][]int      // the nodes, wave by wave, each wave in the set's order
	// why is, for a node that failed for a need, the chain of needs that
	// failed it: "needs db (ready), which FAILED".
	why []string
	// seen caches the status of nodes looked at for a need (outside the
	// set, or running already), by name.
	seenMu sync.Mutex
	seen   map[string]Status
}

// A needEdge is one need of a node, resolved.
type needEdge struct {
	need nodes.Need
	to   []int      // the nodes of the set it names, or none:
	rec  nodes.Node // the record of the node outside the set it names
}

// needError is an error of the nodes' After, matching the sentinel is.
type needError struct {
	msg string
	is  error
}

func (e *needError) Error() string { return e.msg }

// Is makes errors.Is(err, e.is) true.
func (e *needError) Is(target error) bool { return target == e.is }

// needGraph resolves the After of the nodes of results: a need names the
// node of that name, else every node of that group. One that names
// neither is, with outside, the node of that name recorded in the rundir
// (its status decides, at the start); without outside (a stop) it is no
// edge. A cycle, or (outside) a need of a node neither in the set nor
// recorded, is an error ([ErrNeedGraph]).
func (c *call) needGraph(results []Result, outside bool) (*needGraph, error) {
	byName := make(map[string]int, len(results))
	byGroup := map[string][]int{}
	for i, r := range results {
		byName[r.Node.Name] = i
		if r.Node.Group != "" {
			byGroup[r.Node.Group] = append(byGroup[r.Node.Group], i)
		}
	}
	g := &needGraph{edges: make([][]needEdge, len(results)), users: make([][]int, len(results)), why: make([]string, len(results))}
	for i, r := range results {
		for _, nd := range r.Node.After {
			e := needEdge{need: nd}
			if j, ok := byName[nd.Name]; ok {
				e.to = []int{j}
			} else {
				e.to = byGroup[nd.Name]
			}
			if len(e.to) == 0 {
				if !outside {
					continue
				}
				rec, err := record.Read(c.rundir(), nd.Name)
				if err != nil {
					return nil, &needError{is: ErrNeedGraph,
						msg: fmt.Sprintf("%s: needs %s, which is neither in this set nor recorded; nothing done", r.Node.Name, nd.Name)}
				}
				e.rec = rec
			}
			for _, j := range e.to {
				if !slices.Contains(g.users[j], i) {
					g.users[j] = append(g.users[j], i)
				}
			}
			g.edges[i] = append(g.edges[i], e)
		}
	}
	level, err := g.levels(results)
	if err != nil {
		return nil, err
	}
	for i, l := range level {
		for len(g.waves) <= l {
			g.waves = append(g.waves, nil)
		}
		g.waves[l] = append(g.waves[l], i)
	}
	return g, nil
}

// levels is each node's wave (0 for a node that needs none of the set,
// else one past the last of those it needs), or the error of a cycle,
// naming its path.
func (g *needGraph) levels(results []Result) ([]int, error) {
	const (
		unseen = iota
		onPath
		done
	)
	state := make([]int, len(results))
	level := make([]int, len(results))
	var path []int
	var visit func(i int) error
	visit = func(i int) error {
		state[i] = onPath
		path = append(path, i)
		for _, e := range g.edges[i] {
			for _, j := range e.to {
				switch state[j] {
				case onPath:
					var names []string
					for _, k := range path[slices.Index(path, j):] {
						names = append(names, results[k].Node.Name)
					}
					names = append(names, results[j].Node.Name)
					return &needError{is: ErrNeedGraph, msg: "after: a cycle, " + strings.Join(names, " -> ") + "; nothing done"}
				case unseen:
					if err := visit(j); err != nil {
						return err
					}
				}
				level[i] = max(level[i], level[j]+1)
			}
		}
		path = path[:len(path)-1]
		state[i] = done
		return nil
	}
	for i := range results {
		if state[i] == unseen {
			if err := visit(i); err != nil {
				return nil, err
			}
		}
	}
	return level, nil
}

// failAll fails every result with err: nothing is done.
func failAll(results []Result, op string, err error) {
	for i := range results {
		results[i].fail(op, err)
	}
}

// markOnce marks each node of results some node needs done: it is run
// to its end ([call.finishOnce]).
func (g *needGraph) markOnce(results []Result) {
	for i := range g.edges {
		for _, e := range g.edges[i] {
			if e.need.Cond == nodes.AfterDone {
				for _, j := range e.to {
					results[j].runOnce = true
				}
			}
		}
	}
}
