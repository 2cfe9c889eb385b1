package cli

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/multi-launcher/multi/internal/record"
	"github.com/multi-launcher/multi/nodes"
	"golang.org/x/sys/unix"
)

// A pidfile made, a record renamed into place and a pidfile removed each
// wake the watch; a folder that is not there wakes nothing, and breaks
// nothing.
func TestWatchWake(t *testing.T) {
	dir := t.TempDir()
	ns := []nodes.Node{{Name: "w1", PidFile: filepath.Join(dir, "w1.pid")}, {Name: "w2", PidFile: filepath.Join(dir, "gone", "w2.pid")}}
	wake, stop := watchWake(dir, ns)
	defer stop()
	awake := func(what string) {
		t.Helper()
		select {
		case <-wake:
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: no wake-up in 10s", what)
		}
	}
	if err := os.WriteFile(ns[0].PidFile, []byte("1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	awake("w1.pid made")
	tmp := filepath.Join(dir, ".w1.tmp")
	if err := os.WriteFile(tmp, []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, record.Path(dir, "w1")); err != nil {
		t.Fatal(err)
	}
	awake("w1's record renamed into place")
	if err := os.Remove(ns[0].PidFile); err != nil {
		t.Fatal(err)
	}
	awake("w1.pid removed")
}

// Only events on the names watched (or lost events) wake the watch: not
// a logfile's, in the same folder.
func TestInotifyNames(t *testing.T) {
	event := func(wd int32, mask uint32, name string) []byte {
		padded := len(name) + 1
		padded += (16 - padded%16) % 16
		b := make([]byte, unix.SizeofInotifyEvent+padded)
		binary.NativeEndian.PutUint32(b[0:], uint32(wd))
		binary.NativeEndian.PutUint32(b[4:], mask)
		binary.NativeEndian.PutUint32(b[12:], uint32(padded))
		copy(b[unix.SizeofInotifyEvent:], name)
		return b
	}
	dirs := map[int32]string{1: "/run/multi"}
	names := map[string]bool{"/run/multi/w1.pid": true, "/run/multi/w1.node": true}
	cat := func(bs ...[]byte) (out []byte) {
		for _, b := range bs {
			out = append(out, b...)
		}
		return out
	}
	for _, tc := range []struct {
		what string
		b    []byte
		want bool
	}{
		{"a logfile", cat(event(1, unix.IN_CREATE, "w1.log"), event(1, unix.IN_DELETE, ".w1.spare")), false},
		{"a pidfile after a logfile", cat(event(1, unix.IN_CREATE, "w1.log"), event(1, unix.IN_DELETE, "w1.pid")), true},
		{"a record", event(1, unix.IN_MOVED_TO, "w1.node"), true},
		{"another folder's", event(2, unix.IN_CREATE, "w1.pid"), false},
		{"events lost", event(-1, unix.IN_Q_OVERFLOW, ""), true},
		{"nothing", nil, false},
	} {
		if got := inotifyNames(tc.b, dirs, names); got != tc.want {
			t.Errorf("%s: %v; want %v", tc.what, got, tc.want)
		}
	}
}
