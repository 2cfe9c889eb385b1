//go:build unix

package waiter_test

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"

	"github.com/multi-launcher/multi/waiter"
	"golang.org/x/sys/unix"
)

// openFDs counts this process's open descriptors.
func openFDs(t *testing.T) int {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip("no /proc/self/fd to count descriptors")
	}
	return len(ents)
}

// setNofile sets the soft RLIMIT_NOFILE for the rest of the test.
func setNofile(t *testing.T, soft int) {
	var old unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &old); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Setrlimit(unix.RLIMIT_NOFILE, &old) })
	low := old
	setCur(&low.Cur, soft)
	if err := unix.Setrlimit(unix.RLIMIT_NOFILE, &low); err != nil {
		t.Fatal(err)
	}
}

// WaitAll on many more pidfiles than the descriptor limit allows open at
// once, or with none free at all for a while: every target is released
// with no error, none fails with "too many open files". Not parallel: the
// limit is the whole process's.
func TestWaitAllLowDescriptorLimit(t *testing.T) {
	const n = 60
	for _, free := range []int{0, 2, 5, 8, 24} {
		for name, s := range strategies {
			t.Run(fmt.Sprintf("%s/free%d", name, free), func(t *testing.T) {
				dir := t.TempDir()
				cmd := exec.Command(os.Args[0], "-test.run=^$")
				cmd.Env = append(os.Environ(), holdManyEnv+"="+strconv.Itoa(n)+":"+dir, "GORACE=atexit_sleep_ms=0")
				stdin, _ := cmd.StdinPipe()
				stdout, _ := cmd.StdoutPipe()
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() {
					cmd.Process.Kill()
					cmd.Wait()
				})
				if line, _ := bufio.NewReader(stdout).ReadString('\n'); line != "locked\n" {
					t.Fatalf("holder: %q", line)
				}
				var targets []waiter.Target
				for i := range n {
					targets = append(targets, waiter.Target{Path: filepath.Join(dir, fmt.Sprintf("p%d.pid", i))})
				}
				// Room for a few descriptors only, well under n and under
				// what a run would keep without a bound.
				setNofile(t, openFDs(t)+free)
				var fillers []*os.File
				if free == 0 {
					// None at all until the wait is under way: every
					// test of a lock meets EMFILE and must be retried.
					for {
						f, err := os.Open(os.DevNull)
						if err != nil {
							break
						}
						fillers = append(fillers, f)
					}
				}
				var mu sync.Mutex
				released := map[string]bool{}
				finish := mustBlock(t, func() error {
					return waiter.WaitAll(t.Context(), targets, s, func(tg waiter.Target, err error) {
						mu.Lock()
						defer mu.Unlock()
						if err != nil {
							t.Errorf("%s: %v", filepath.Base(tg.Path), err)
						}
						if free >= 5 {
							// stopwait removes the pidfile from here: the
							// wait must leave descriptors free for it.
							for range 2 {
								f, err := os.Open(os.DevNull)
								if err != nil {
									t.Errorf("done cannot open a file: %v", err)
									continue
								}
								defer f.Close()
							}
						}
						released[tg.Path] = true
					})
				})
				mu.Lock()
				if len(released) != 0 {
					t.Errorf("%d released while all were held", len(released))
				}
				mu.Unlock()
				for _, f := range fillers {
					f.Close()
				}
				stdin.Close()
				if err := finish(); err != nil {
					t.Fatal(err)
				}
				if len(released) != n {
					t.Errorf("%d of %d targets released", len(released), n)
				}
			})
		}
	}
}

// setCur sets an rlimit field, uint64 on Linux and int64 on FreeBSD.
func setCur[T int64 | uint64](p *T, v int) { *p = T(v) }
