//go:build unix && !linux

package logwriter

// ended says how the node ended where no pidfd tells: only that its
// output closed.
func ended(pidfd, pid int, ticks uint64) string { return "ended (its output closed)" }

// pipeSize is the size of the pipe at fd: 64 KiB, as pipes are here.
func pipeSize(fd int) int { return 64 << 10 }
