package pidfile

import (
	"errors"
	"strings"
	"testing"
)

func TestParsePID(t *testing.T) {
	t.Parallel()
	good := map[string]int{"1234\n": 1234, "2\n": 2, "4194304\n": 4194304, "77\nextra\n": 77}
	for in, want := range good {
		if got, err := parsePID([]byte(in)); err != nil || got != want {
			t.Errorf("parsePID(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	// Hostile and broken texts: none may yield a pid, least of all <= 1.
	bad := []string{"", "\n", "-1\n", "0\n", "1\n", "+77\n", " 77\n", "77 \n", "\t88\n", "99\r\n", "1_000\n",
		"12345", "garbage\n", "4194305\n", "99999999999999999999\n", "007\n", strings.Repeat("9", 1<<20)}
	for _, in := range bad {
		if got, err := parsePID([]byte(in)); err == nil || !errors.Is(err, ErrBadPidfile) || got != 0 {
			t.Errorf("parsePID(%.20q) = %d, %v; want ErrBadPidfile", in, got, err)
		}
	}
}

func FuzzParsePID(f *testing.F) {
	for _, s := range []string{"1234\n", "-1\n", "0\n", "1\n", "+5\n", "", "4194304\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		pid, err := parsePID(b)
		if err == nil && (pid <= 1 || pid > maxPID) {
			t.Fatalf("parsePID(%q) = %d", b, pid)
		}
	})
}
