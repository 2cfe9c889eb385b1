package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/multi-launcher/multi/internal/record"
	"github.com/multi-launcher/multi/multi"
	"github.com/multi-launcher/multi/nodes"
	"github.com/urfave/cli/v2"
)

// applyGrammar: apply starts nodes, from the file or a command given;
// scaleGrammar: scale's words are GROUP=N, not names.
var (
	applyGrammar = grammar{forward: true, starts: true, project: true, endsNodes: true}
	scaleGrammar = grammar{project: true, endsNodes: true}
)

// applyCommand is apply: make the running nodes what the project file
// (or the command line) describes, touching only what changed.
func applyCommand() *cli.Command {
	return grammarCommand(&cli.Command{
		Name:      "apply",
		Usage:     "start what is missing, restart what changed (rolling), leave the rest untouched",
		UsageText: "multi apply [flags] [GROUPS|NODES...] [-- COMMAND [ARG...]]",
		Description: `Compare the project file (multi.toml or Procfile, here or in a folder
above), or the nodes and command given, with each node's record: a node not
running is started; one whose command, options, environment, env files
(their paths, or a file modified since it started), folder, files, readiness
check, kill mode, limits or after edges differ is restarted,
--max-unavailable at a time, each up (and ready) before the next goes down;
the others are left untouched, same process. --prune also stops and forgets
the nodes recorded for the project's groups (started in this folder, from
the command line) that it no longer describes. --dry-run prints, per node,
what would happen and why.

   multi apply --dry-run
   multi apply --prune --timeout=30s
   multi apply workers`,
		Flags: common(withLimits(flagRundir, flagTimeout, flagWait, flagMaxUnavailable, flagSettle, flagReady, flagReadyTimeout, flagEnv, flagEnvFile, flagJSON, flagDryRun, flagPrune)...),
	}, applyGrammar, func(c *cli.Context, a *call) (int, error) {
		return apply(c, a, nil)
	})
}

// scaleCommand is scale: a counted group to a new count.
func scaleCommand() *cli.Command {
	return grammarCommand(&cli.Command{
		Name:      "scale",
		Usage:     "start or stop the nodes of a counted group of the project file to reach a count",
		UsageText: "multi scale [flags] GROUP=N...",
		Description: `Up: start the missing indexes (workers4, workers5), waiting for each to be
ready. Down: stop the highest indexes gracefully (as stopwait, SIGKILL only
after --timeout or the file's stop_timeout), then forget them. The group
is otherwise applied as apply would: a changed node is restarted. The file
is not rewritten: a later apply --prune goes back to its count.

   multi scale workers=5
   multi scale workers=2 --timeout=1m`,
		Flags: common(flagRundir, flagTimeout, flagWait, flagMaxUnavailable, flagSettle, flagJSON, flagDryRun),
	}, scaleGrammar, func(c *cli.Context, a *call) (int, error) {
		if len(a.Names) == 0 {
			return exitUsage, usage(c, errors.New("no GROUP=N given"))
		}
		counts := map[string]int{}
		for _, w := range a.Names {
			g, n, ok := strings.Cut(w, "=")
			v, err := strconv.Atoi(n)
			if !ok || err != nil || v < 0 {
				return exitUsage, usage(c, fmt.Errorf("%q: want GROUP=N, N a count (0 or more)", nodes.Printable(w)))
			}
			counts[g] = v
		}
		a.Names = nil
		return apply(c, a, counts)
	})
}

// apply is apply, or with counts scale: the file's groups named in
// counts at those counts, the nodes beyond them withdrawn.
func apply(c *cli.Context, a *call, counts map[string]int) (int, error) {
	wd, err := os.Getwd()
	if err != nil {
		return exitFailed, err
	}
	var ns []nodes.Node
	if a.HasCommand {
		if ns, err = resolve(c, a); err != nil {
			return exitUsage, err
		}
	} else {
		pf, err := findProjectFile(wd)
		if err != nil {
			return exitUsage, usage(c, fmt.Errorf("%w; nothing done", err))
		}
		if pf == nil {
			return exitUsage, usage(c, fmt.Errorf("no project file (%s or %s) in %s or a folder above it, and no -- COMMAND: nothing to apply", projectFileName, procfileName, nodes.Printable(wd)))
		}
		var only []string
		for g, n := range counts {
			i := slices.IndexFunc(pf.Groups, func(pg projectGroup) bool { return pg.Name == g })
			if i < 0 {
				return exitUsage, usage(c, fmt.Errorf("%s: no group %s in it", pf.Path, nodes.Printable(g)))
			}
			if len(pf.Groups[i].Spec.Names) != 1 || !isCount(pf.Groups[i].Spec.Names[0]) {
				return exitUsage, usage(c, fmt.Errorf("%s: group %s has names, not a count: only a counted group scales", pf.Path, g))
			}
			pf.Groups[i].Spec.Names = []string{strconv.Itoa(n)}
			pf.Groups[i].Spec.Options = clipScopes(pf.Groups[i].Spec.Options, n)
			if n == 0 {
				pf.Groups = slices.Delete(pf.Groups, i, i+1)
			}
			only = append(only, g)
		}
		if len(a.Names) > 0 && !pf.selects(a.Names) {
			return exitUsage, usage(c, fmt.Errorf("%s: %s: not a group or node of it", pf.Path, nodes.Printable(strings.Join(a.Names, " "))))
		}
		a.file = pf
		pf.defaults(a)
		skipped := func(err error) { fmt.Fprintf(c.App.ErrWriter, "multi %s: warning: %v; skipped\n", c.Command.Name, err) }
		if ns, err = pf.nodes(a, rundir(a), a.Names, skipped); err != nil {
			return exitUsage, usage(c, fmt.Errorf("%w; nothing done", err))
		}
		if counts != nil {
			ns = slices.DeleteFunc(ns, func(n nodes.Node) bool { return !slices.Contains(only, n.Group) })
		}
		if a.Prune || counts != nil {
			a.Prune = true
			a.Names = only // the groups whose nodes a prune may withdraw; nil: all of the file's
		}
	}
	rd := rundir(a)
	var remove []nodes.Node
	if a.Prune {
		remove = withdrawn(a, rd, wd, ns)
	}
	cl := &multi.Cluster{Nodes: ns, RunDir: rd, Detach: true, Settle: a.Settle, ReadyTimeout: a.ReadyTimeout}
	o := newOutput(c, a)
	opts := multi.ApplyOptions{DryRun: a.DryRun, Remove: remove,
		Restart: multi.RestartOptions{Stop: stopOptions(a), MaxUnavailable: a.MaxUnavailable}}
	done := o.progress(c.Command.Name, true, cl, &opts.Restart.Stop)
	changes, err := cl.Apply(c.Context, opts) // a change per node, failed or not
	done()
	if a.JSON {
		b, _ := json.MarshalIndent(changes, "", "  ")
		fmt.Fprintf(c.App.Writer, "%s\n", b)
	} else {
		for _, ch := range changes {
			printChange(o, ch, a.DryRun)
		}
	}
	if err != nil {
		return exitFailed, nil
	}
	return exitOK, nil
}

// printChange prints one node's line of apply: what would happen and why
// (a dry run), or what did, with why a node was restarted.
func printChange(o *output, ch multi.Change, dry bool) {
	r := ch.Result
	why := ""
	if len(ch.Why) > 0 {
		why = nodes.Printable(strings.Join(ch.Why, ", "))
	}
	switch {
	case dry && why != "":
		fmt.Fprintf(o.w, "%s: would %s: %s\n", r.Node.Name, ch.Action, why)
	case dry:
		fmt.Fprintf(o.w, "%s: would %s\n", r.Node.Name, ch.Action)
	case ch.Action == multi.Keep:
		if !o.quiet {
			fmt.Fprintf(o.w, "%s: unchanged (pid %d)\n", r.Node.Name, r.PID)
		}
	case ch.Action == multi.Replace && r.Err == nil:
		if !o.quiet {
			fmt.Fprintf(o.w, "%s: %s; changed: %s\n", r.Node.Name, o.resultLine(r, false), why)
		}
	default:
		o.result(r)
	}
}

// withdrawn are the recorded nodes a prune stops and forgets: those of
// the project file's groups beyond what it describes (see
// projectFile.extras), or, from the command line, the nodes recorded in
// rundir as started in wd that are not among ns.
func withdrawn(a *call, rundir, wd string, ns []nodes.Node) []nodes.Node {
	if a.file != nil {
		return a.file.extras(rundir, a.Names, ns)
	}
	recs, _ := record.ReadAll(rundir)
	mine := project(wd)
	var out []nodes.Node
	for _, r := range recs {
		if mine(r.Dir) && !slices.ContainsFunc(ns, func(n nodes.Node) bool { return n.Name == r.Name }) {
			out = append(out, record.ResolveNode(rundir, r))
		}
	}
	return out
}

// within reports whether dir is the folder top or inside it.
func within(top, dir string) bool {
	rel, err := filepath.Rel(top, dir)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../")
}

// clipScopes is opts for a count of n: a scope of indexes ("3", "2-5",
// "1,4") loses those above n, and an option left with none is dropped,
// so that a scale down keeps the options of the nodes that stay.
func clipScopes(opts []nodes.Option, n int) []nodes.Option {
	var out []nodes.Option
	for _, o := range opts {
		if o.Scope == "" {
			out = append(out, o)
			continue
		}
		var kept []string
		numeric := true
		for _, item := range strings.Split(o.Scope, ",") {
			lo, hi, ranged := strings.Cut(item, "-")
			a, err1 := strconv.Atoi(lo)
			b, err2 := a, error(nil)
			if ranged {
				b, err2 = strconv.Atoi(hi)
			}
			if err1 != nil || err2 != nil {
				numeric = false
				break
			}
			switch {
			case a > n:
			case b > n && a == n:
				kept = append(kept, strconv.Itoa(a))
			case b > n:
				kept = append(kept, fmt.Sprintf("%d-%d", a, n))
			default:
				kept = append(kept, item)
			}
		}
		if !numeric {
			out = append(out, o)
		} else if len(kept) > 0 {
			o.Scope = strings.Join(kept, ",")
			out = append(out, o)
		}
	}
	return out
}
