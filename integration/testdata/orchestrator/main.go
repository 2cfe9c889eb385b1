// Command orchestrator drives multi as a Go library, as a deployer or test
// harness would: it starts 20 nodes, checks their status, restarts two of
// them (a subset, Only), sends two a signal that is not a stop (Send),
// checks that unknown and duplicate nodes are refused, and stopwaits them
// all, and exits non-zero if anything is not as it
// should be. Usage: orchestrator RUNDIR
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/multi-launcher/multi/multi"
	"github.com/multi-launcher/multi/nodes"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: orchestrator RUNDIR")
		os.Exit(2)
	}
	if err := run(os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, "orchestrator:", err)
		os.Exit(1)
	}
}

func run(rundir string) error {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()

	ns, err := nodes.Spec{Names: []string{"20"}, RangePrefix: "n", RunDir: rundir,
		Command: []string{"sleep", "300"}}.Nodes()
	if err != nil {
		return err
	}
	progress := 0
	c := &multi.Cluster{Nodes: ns, RunDir: rundir, Progress: func(multi.Result) { progress++ }}
	defer c.Kill(context.Background(), multi.StopOptions{}) // whatever happens, leave nothing running

	res, err := c.Start(ctx)
	if err != nil {
		return err
	}
	fmt.Printf("started %d nodes, %d progress reports\n", len(res), progress)

	// A second start finds them all running: an outcome, not an error.
	again, err := c.Start(ctx)
	if err != nil {
		return fmt.Errorf("second start: %v; want no error", err)
	}
	for i, r := range again {
		if r.Outcome != multi.AlreadyRunning || r.PID != res[i].PID {
			return fmt.Errorf("second start: %v; want already running with pid %d", r, res[i].PID)
		}
	}
	fmt.Println("second start: already running, e.g.", again[0].Node.Name)

	if err := expect(ctx, c, multi.StateRunning, 20); err != nil {
		return err
	}

	two, err := c.Only("n4", "n5")
	if err != nil {
		return err
	}
	// One at a time, each confirmed up before the next goes down.
	res2, err := two.Restart(ctx, multi.RestartOptions{Rolling: true})
	if err != nil {
		return err
	}
	for i, r := range res2 {
		if r.PID == res[3+i].PID || r.Outcome != multi.Restarted {
			return fmt.Errorf("%s: restart: %v, pid %d (was %d)", r.Node.Name, r.Outcome, r.PID, res[3+i].PID)
		}
		fmt.Printf("%s: %s\n", r.Node.Name, r.Outcome)
	}
	if err := expect(ctx, c, multi.StateRunning, 20); err != nil {
		return err
	}

	// Any signal to a subset, through the lock, without a stop: WINCH,
	// which sleep ignores.
	some, err := c.Only("n1", "n2")
	if err != nil {
		return err
	}
	sent, err := some.Send(ctx, syscall.SIGWINCH, multi.StopOptions{})
	if err != nil {
		return err
	}
	for _, r := range sent {
		if r.Outcome != multi.Signalled || r.Signal != syscall.SIGWINCH || r.PID <= 1 {
			return fmt.Errorf("%s: %s, signal %d; want WINCH sent", r.Node.Name, r, r.Signal)
		}
		fmt.Printf("%s: sent %s\n", r.Node.Name, strings.TrimPrefix(unix.SignalName(r.Signal), "SIG"))
	}
	if err := expect(ctx, c, multi.StateRunning, 20); err != nil {
		return err
	}
	if _, err := c.Only("n1", "n99"); !errors.Is(err, multi.ErrUnknownNode) {
		return fmt.Errorf("Only(n99): %v; want ErrUnknownNode", err)
	}
	fmt.Println("only n99: unknown node")
	// Two Specs joined hold n1 twice: refused before anything starts.
	dup := &multi.Cluster{Nodes: append(ns[:1:1], ns[0]), RunDir: rundir}
	if _, err := dup.Start(ctx); !errors.Is(err, multi.ErrDuplicateNode) {
		return fmt.Errorf("duplicate n1: %v; want ErrDuplicateNode", err)
	}
	fmt.Println("n1 twice: duplicate node")

	res, err = c.StopWait(ctx, multi.StopOptions{})
	if err != nil {
		return err
	}
	stopped := 0
	for _, r := range res {
		if r.Outcome == multi.Stopped {
			stopped++
		}
	}
	fmt.Printf("stopwait: %d stopped\n", stopped)
	return expect(ctx, c, multi.StateStopped, 20)
}

// expect checks that want nodes are in state.
func expect(ctx context.Context, c *multi.Cluster, state multi.State, want int) error {
	sts, err := c.Status(ctx)
	if err != nil {
		return err
	}
	n := 0
	for _, s := range sts {
		if s.State == state {
			n++
		}
	}
	fmt.Printf("status: %d %s\n", n, state)
	if n != want {
		return fmt.Errorf("%d nodes %s; want %d", n, state, want)
	}
	return nil
}
