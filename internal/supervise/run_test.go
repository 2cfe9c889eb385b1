//go:build linux

package supervise

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/multi-launcher/multi/internal/launch"
	"github.com/multi-launcher/multi/internal/pin"
	"github.com/multi-launcher/multi/internal/testutil"
	"github.com/multi-launcher/multi/nodes"
	"github.com/multi-launcher/multi/nodes/pidfile"
)

// host is a Host on real nodes: started through launch.Spawn with the
// run's reaper, stopped through their locks. It keeps each node's last
// result as a word.
type host struct {
	t    *testing.T
	last *lastWords
}

// lastWords are the nodes' last results, by name.
type lastWords struct {
	mu sync.Mutex
	m  map[string]string
}

func newHost(t *testing.T) host { return host{t, &lastWords{m: map[string]string{}}} }

// note records word as n's last result and returns o.
func (h host) note(n nodes.Node, word string, o Outcome) Outcome {
	h.last.mu.Lock()
	defer h.last.mu.Unlock()
	h.last.m[n.Name] = word
	return o
}

// words are the last results of ns, in their order.
func (h host) words(ns []nodes.Node) []string {
	h.last.mu.Lock()
	defer h.last.mu.Unlock()
	var out []string
	for _, n := range ns {
		out = append(out, h.last.m[n.Name])
	}
	return out
}

func (h host) Check(extra error) ([]Outcome, bool) { return nil, extra == nil }

func (h host) start(ctx context.Context, rp *launch.Reaper, n nodes.Node) Outcome {
	ch, err := launch.Spawn(ctx, rp, n, os.Environ(), 0)
	if err != nil {
		return h.note(n, "failed", Outcome{Err: err})
	}
	ch.LetGo(false)
	return h.note(n, "started", Outcome{PID: ch.PID()})
}

func (h host) StartAll(ctx context.Context, rp *launch.Reaper) []Outcome { panic("set by the test") }

func (h host) Start(ctx context.Context, rp *launch.Reaper, n nodes.Node, word string) Outcome {
	return h.start(ctx, rp, n)
}

func (h host) StopWait(ctx context.Context, ns []nodes.Node) []Outcome {
	out := make([]Outcome, len(ns))
	for i, n := range ns {
		if _, err := pin.SignalNode(n.PidFile, 0, syscall.SIGTERM, false); err != nil && !errors.Is(err, pin.ErrNotRunning) {
			out[i].Err = err
			continue
		}
		testutil.PollUntil(h.t, n.Name+"'s lock released", func() bool {
			info, err := pidfile.Inspect(n.PidFile)
			return err == nil && info.State != pidfile.Running
		})
		h.note(n, "stopped", out[i])
	}
	return out
}

func (h host) Exited(n nodes.Node, pid int, ws syscall.WaitStatus, onPurpose bool) Outcome {
	if onPurpose {
		return h.note(n, "stopped", Outcome{PID: pid})
	}
	err := &launch.ExitError{Status: ws, Err: fmt.Errorf("%s: %w (%s)", n.Name, ErrNodeExited, launch.DescribeExit(ws))}
	return h.note(n, "exited", Outcome{PID: pid, Err: err})
}

func (h host) Fail(n nodes.Node, err error) error { return fmt.Errorf("%s: %w", n.Name, err) }

func (h host) KillTree(n nodes.Node) bool { return false }

// allHost is host with StartAll over ns.
type allHost struct {
	host
	ns []nodes.Node
}

func (h allHost) StartAll(ctx context.Context, rp *launch.Reaper) []Outcome {
	out := make([]Outcome, len(h.ns))
	for i, n := range h.ns {
		out[i] = h.start(ctx, rp, n)
	}
	return out
}

func testNodes(t *testing.T, cmds ...[]string) ([]nodes.Node, string) {
	dir := t.TempDir()
	var ns []nodes.Node
	for i, cmd := range cmds {
		name := fmt.Sprintf("w%d", i+1)
		ns = append(ns, nodes.Node{Name: name, Command: cmd,
			PidFile: filepath.Join(dir, name+".pid"), LogFile: filepath.Join(dir, name+".log")})
	}
	return ns, dir
}

// lineWatch is a Log that calls f with each line.
type lineWatch struct {
	mu sync.Mutex
	f  func(string)
}

func (w *lineWatch) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		w.f(l)
	}
	return len(b), nil
}

// The exit policy: with stop-all a node that exits on its own stops the
// others and decides the run's code; with ignore it is left down, the
// others run on until the run is stopped, and its exit still decides the
// code. Every node is stopped at the end. A second run in the process is
// refused while one is under way.
func TestRunExitPolicy(t *testing.T) {
	if !testutil.InChild(t, "TestRunExitPolicy", "MULTI_TEST_SUPERVISE") {
		return
	}
	for _, policy := range []string{StopAll, Ignore} {
		ns, dir := testNodes(t, []string{"sleep", "300"}, []string{"sh", "-c", "read x; exit 3"})
		ctx, cancel := context.WithCancel(context.Background())
		second := make(chan error, 1)
		var once sync.Once
		log := &lineWatch{f: func(l string) {
			if strings.Contains(l, "stopping every node") || strings.Contains(l, "left down") {
				// The run is under way: no second one in this process.
				once.Do(func() {
					_, why := Run(ctx, allHost{newHost(t), ns}, ns, Options{})
					second <- why
				})
			}
			if strings.Contains(l, "left down") {
				cancel()
			}
		}}
		done := make(chan struct{})
		var code int
		var why error
		h := allHost{newHost(t), ns}
		var cancelled bool
		go func() {
			defer close(done)
			code, why = Run(ctx, h, ns, Options{OnExit: policy, Signal: syscall.SIGTERM, RunDir: dir, Log: log})
			cancelled = ctx.Err() != nil
		}()
		// w2 reads its stdin, /dev/null: it exits 3 as soon as it runs.
		<-done
		cancel()
		// stop-all ends the run by itself; ignore keeps w1 running until
		// the run is stopped (here by ctx).
		if cancelled != (policy == Ignore) {
			t.Errorf("%s: the run ended with its context cancelled %v; want %v", policy, cancelled, policy == Ignore)
		}
		// w2 exits either once its start is confirmed (ErrNodeExited) or
		// before (ErrExitedAtOnce): the policy is the same.
		if code != 3 || !errors.Is(why, ErrNodeExited) && !errors.Is(why, launch.ErrExitedAtOnce) {
			t.Errorf("%s: Run = %d, %v; want 3 and ErrNodeExited or ErrExitedAtOnce", policy, code, why)
		}
		if last := h.words(ns); len(last) != 2 || last[0] != "stopped" || last[1] != "exited" && last[1] != "failed" {
			t.Errorf("%s: last results %v; want w1 stopped, w2 exited or failed", policy, last)
		}
		if err := <-second; !errors.Is(err, ErrRunUnderWay) {
			t.Errorf("%s: a second run: %v; want ErrRunUnderWay", policy, err)
		}
		for _, n := range ns {
			if info, err := pidfile.Inspect(n.PidFile); err != nil || info.State == pidfile.Running {
				t.Errorf("%s: %s left %+v, %v; want stopped", policy, n.Name, info, err)
			}
		}
	}
}
