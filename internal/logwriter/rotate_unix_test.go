//go:build unix

package logwriter

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func fileText(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Lines written past the size go to a new file at the logfile's name,
// the full one renamed to NAME.1 and the older ones moved up, the oldest
// beyond keep removed; no file is ever over the size, none holds part of
// a line but for one longer than a whole file, and every line kept is
// in order.
func TestRotatorKeepsSizeAndLines(t *testing.T) {
	path := filepath.Join(t.TempDir(), "w1.log")
	const size = 4096
	r, err := Open(path, size, 2)
	if err != nil {
		t.Fatal(err)
	}
	var all bytes.Buffer
	for i := 0; i < 500; i++ {
		fmt.Fprintf(&all, "line %d of a logfile kept under a size\n", i)
	}
	// Written in pieces that end anywhere, as a pipe hands them over.
	b := all.Bytes()
	for len(b) > 0 {
		k := min(len(b), 1000)
		if _, err := r.Write(b[:k]); err != nil {
			t.Fatal(err)
		}
		b = b[k:]
	}
	r.Close()
	if _, err := os.Stat(path + ".3"); !os.IsNotExist(err) {
		t.Errorf("%s.3 kept with keep 2: %v", path, err)
	}
	var kept string
	for _, name := range []string{path + ".2", path + ".1", path} {
		text := fileText(t, name)
		if len(text) > size {
			t.Errorf("%s: %d bytes, over %d", name, len(text), size)
		}
		if name != path && (len(text) < size-100 || !strings.HasPrefix(text, "line ") || !strings.HasSuffix(text, "\n")) {
			t.Errorf("%s: %d bytes, not whole lines up to the size: %.40q...%.40q", name, len(text), text, text[max(0, len(text)-40):])
		}
		kept += text
	}
	if !strings.HasSuffix(all.String(), kept) {
		t.Errorf("the files kept are not the end of what was written, in order")
	}
}

// A line longer than a whole file is split at the size: no file is over
// it even then. keep 0 keeps no rotated file.
func TestRotatorLongLineKeepNone(t *testing.T) {
	path := filepath.Join(t.TempDir(), "w1.log")
	r, err := Open(path, 4096, 0)
	if err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("x", 10000) + "\n"
	if _, err := r.Write([]byte("short\n" + long + "tail\n")); err != nil {
		t.Fatal(err)
	}
	r.Close()
	if got := fileText(t, path); got != strings.Repeat("x", 10000-8192)+"\ntail\n" {
		t.Errorf("the logfile holds %d bytes: %.40q", len(got), got)
	}
	if _, err := os.Stat(path + ".1"); !os.IsNotExist(err) {
		t.Errorf("%s.1 kept with keep 0: %v", path, err)
	}
}

// The logfile is never reached through a symbolic link, and rotated
// files beyond keep (left from a larger keep) go when the writer opens.
func TestRotatorOpen(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "target")
	os.WriteFile(target, []byte("not the log's\n"), 0o644)
	path := filepath.Join(dir, "w1.log")
	if err := os.Symlink(target, path); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(path, 4096, 1); err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Errorf("Open through a link: %v", err)
	}
	os.Remove(path)
	for _, n := range []string{".1", ".2", ".3", ".x"} {
		os.WriteFile(path+n, []byte("old\n"), 0o644)
	}
	r, err := Open(path, 4096, 1)
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
	for n, want := range map[string]bool{".1": true, ".2": false, ".3": false, ".x": true} {
		if _, err := os.Stat(path + n); (err == nil) != want {
			t.Errorf("%s%s there: %v, want %v", path, n, err == nil, want)
		}
	}
	if fileText(t, target) != "not the log's\n" {
		t.Error("the link's target was written")
	}
}
