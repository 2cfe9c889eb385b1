package multi_test

import (
	"os"
	"strconv"
	"strings"
	"time"
)

// The sizes of BenchmarkLogWriter's node's writes.
const (
	benchWarmBytes = 8 << 20
	benchLogBytes  = 32 << 20
	benchLineLen   = 100
)

// linesNode is the benchmark's node: it writes benchWarmBytes and then
// benchLogBytes of lines to its stdout, MULTI_BENCH_CHUNK lines at a
// time, and the nanoseconds the latter took to the file
// MULTI_BENCH_REPORT.
func linesNode() {
	chunk, _ := strconv.Atoi(os.Getenv("MULTI_BENCH_CHUNK"))
	line := strings.Repeat("x", benchLineLen-1) + "\n"
	buf := []byte(strings.Repeat(line, max(chunk, 1)))
	write := func(size int) {
		for n := 0; n < size; n += len(buf) {
			if _, err := os.Stdout.Write(buf); err != nil {
				os.Exit(1)
			}
		}
	}
	write(benchWarmBytes)
	t0 := time.Now()
	write(benchLogBytes)
	took := time.Since(t0)
	os.WriteFile(os.Getenv("MULTI_BENCH_REPORT"), []byte(strconv.FormatInt(int64(took), 10)), 0o644)
	os.Exit(0)
}
