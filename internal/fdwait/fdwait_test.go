package fdwait

import (
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
)

// Short of descriptors with nothing in this process to give one back,
// Retry gives up at once, naming the limit: it does not wait 30 s for
// what will never come.
func TestRetryAloneGivesUp(t *testing.T) {
	var tries int
	err := Retry(func() error { tries++; return syscall.EMFILE }, nil)
	if !Short(err) || !strings.Contains(err.Error(), "ulimit -n") {
		t.Errorf("Retry: %v; want EMFILE naming the limit", err)
	}
	if tries > 2 {
		t.Errorf("tried %d times with nothing to give a descriptor back; want at most 2", tries)
	}
}

// With another operation holding descriptors, Retry waits for it, and
// tries again once it has let go: then it gets its descriptor.
func TestRetryWaitsForAHolder(t *testing.T) {
	mine := Hold() // the operation that retries holds some too
	defer mine()
	release := Hold()
	var given atomic.Bool
	var tries atomic.Int64
	err := Retry(func() error {
		if tries.Add(1) == 3 {
			// The other operation closes its descriptors now.
			given.Store(true)
			release()
		}
		if !given.Load() {
			return syscall.EMFILE
		}
		return nil
	}, nil)
	if err != nil {
		t.Errorf("Retry: %v after %d tries; want the descriptor once the holder let go", err, tries.Load())
	}
	release() // once only: a second call changes nothing
	if h := holders.Load(); h != 1 {
		t.Errorf("%d holders left; want 1, the retrying one", h)
	}
}

// An error that is not for want of a descriptor comes back at once.
func TestRetryOtherError(t *testing.T) {
	var tries int
	if err := Retry(func() error { tries++; return syscall.ENOENT }, nil); err != syscall.ENOENT || tries != 1 {
		t.Errorf("Retry: %v after %d tries; want ENOENT after 1", err, tries)
	}
}
