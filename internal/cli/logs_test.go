package cli

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

func TestLogs(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "w1.log"), []byte("one\ntwo\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs := runCLI(t, "logs", "w1", "--rundir", dir)
	if code != exitOK || out != "one\ntwo\n" || errs != "" {
		t.Errorf("logs w1: exit %d, %q, %q", code, out, errs)
	}
	code, out, errs = runCLI(t, "logs", "w2", "--rundir", dir)
	if code != exitFailed || out != "" || errs != "w2: FAILED: logfile "+filepath.Join(dir, "w2.log")+": no such file or directory\n" {
		t.Errorf("logs w2 (no log): exit %d, %q, %q", code, out, errs)
	}
}

// syncBuffer is a bytes.Buffer that the follower writes while the test
// reads.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// -f prints what is appended, starts over after a truncation, and stops
// when cancelled.
func TestFollowLog(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "w1.log")
	if err := os.WriteFile(path, []byte("a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var out syncBuffer
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- printLog(ctx, &out, path, true) }()
	waitFor := func(want string) {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); out.String() != want; time.Sleep(5 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("followed %q; want %q", out.String(), want)
			}
		}
	}
	waitFor("a\n")
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("b\n")
	f.Close()
	waitFor("a\nb\n")
	if err := os.WriteFile(path, []byte("c\n"), 0o644); err != nil { // truncates
		t.Fatal(err)
	}
	waitFor("a\nb\nc\n")
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("printLog after cancel: %v", err)
	}
}
