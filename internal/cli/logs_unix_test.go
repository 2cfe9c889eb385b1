//go:build unix

package cli

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// logs reaches the logfile as a pidfile is reached: a symbolic link
// planted at its name (to a file only root may read) is not followed, and
// a FIFO is refused at once rather than waited on; each is a failure of
// the node, naming the file.
func TestLogsRefusesLinkAndFIFO(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	secret := filepath.Join(dir, "secret")
	if err := os.WriteFile(secret, []byte("root's secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	link, fifo := filepath.Join(dir, "w1.log"), filepath.Join(dir, "w2.log")
	if err := os.Symlink(secret, link); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ name, want string }{
		{"w1", "w1: FAILED: logfile " + link + ": is a symbolic link (not followed)\n"},
		{"w2", "w2: FAILED: logfile " + fifo + ": is a FIFO, not a regular file\n"},
	} {
		type res struct {
			code      int
			out, errs string
		}
		done := make(chan res, 1)
		go func() {
			code, out, errs := runCLI(t, "logs", c.name, "--rundir", dir)
			done <- res{code, out, errs}
		}()
		var r res
		select {
		case r = <-done:
		case <-time.After(10 * time.Second):
			// Let the stuck open go, so that the test ends.
			if f, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
				f.Close()
			}
			t.Fatalf("logs %s: still waiting after 10s", c.name)
		}
		if r.code != exitFailed || r.out != "" || r.errs != c.want {
			t.Errorf("logs %s: exit %d, %q, %q; want %d, \"\", %q", c.name, r.code, r.out, r.errs, exitFailed, c.want)
		}
	}
}
