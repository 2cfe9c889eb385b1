package nodes

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/multi-launcher/multi/internal/safefs"
)

// State is what the kernel says about a pidfile.
type State int

const (
	// Absent: there is no pidfile.
	Absent State = iota
	// Stale: the pidfile exists but no process holds its lock, whatever
	// pid it names.
	Stale
	// Running: a process this one can see holds the lock; Info.PID is it.
	Running
	// Elsewhere: a whole-file POSIX write lock, a node's, is held by a
	// process this one cannot name: one in a pid namespace it cannot see
	// (the kernel reports pid 0). It must not be signalled.
	Elsewhere
	// Foreign: the pidfile is locked, but not the way a node locks it: a
	// read lock, an OFD lock (multi's own brief lock, or another
	// program's), or a lock on part of the file. Its holder is not the
	// node and is never signalled; Info.LockErr names it.
	Foreign
)

// String returns the state as status prints it: "stopped" for Absent,
// "stale", "running" or "elsewhere".
func (s State) String() string {
	switch s {
	case Absent:
		return "stopped"
	case Stale:
		return "stale"
	case Running:
		return "running"
	case Elsewhere:
		return "elsewhere"
	case Foreign:
		return "foreign"
	}
	return "State(" + strconv.Itoa(int(s)) + ")"
}

// MaxPID is the largest pid Linux can hand out (PID_MAX_LIMIT on 64-bit).
const MaxPID = 1 << 22

// ErrAlreadyRunning is matched (with [errors.Is]) by the error [Acquire] and
// [RemoveStale] return when another process holds the pidfile's lock.
var ErrAlreadyRunning = errors.New("already running")

// ErrBadPidfile is matched by errors about a pidfile that is not a regular
// file, or whose text is not a valid pid.
var ErrBadPidfile = errors.New("bad pidfile")

// A HeldError reports that a live process holds a pidfile's lock.
type HeldError struct {
	Path string
	// PID is the holder, from the kernel; 0 when it cannot be seen from here.
	PID int
}

func (e *HeldError) Error() string {
	if e.PID <= 0 {
		return "already running (lock held by a process in another pid namespace)"
	}
	return "already running (pid " + strconv.Itoa(e.PID) + ")"
}

// Is makes errors.Is(err, ErrAlreadyRunning) true.
func (e *HeldError) Is(target error) bool { return target == ErrAlreadyRunning }

// ErrForeignLock is matched by a [*ForeignError].
var ErrForeignLock = errors.New("locked, but not by a node")

// A ForeignError reports a pidfile locked by something that is not a node
// (see [Foreign]): its holder is never taken for the node nor signalled.
type ForeignError struct {
	Path string
	// PID is the locker as the kernel names it: -1 for an OFD lock, 0 for
	// a process in another pid namespace.
	PID int
	// Kind describes the lock: "read lock", "OFD write lock", "write lock
	// on bytes 0-9".
	Kind string
}

func (e *ForeignError) Error() string {
	who := "pid " + strconv.Itoa(e.PID)
	switch {
	case e.PID < 0:
		who = "a process F_GETLK cannot name"
	case e.PID == 0:
		who = "a process in another pid namespace"
	}
	return "pidfile " + e.Path + ": " + e.Kind + " held by " + who + ", not a node's lock (not signalled)"
}

// Is makes errors.Is(err, ErrForeignLock) true.
func (e *ForeignError) Is(target error) bool { return target == ErrForeignLock }

// OFD reports whether the lock is an OFD lock, which may be another
// multi's brief lock, let go within moments.
func (e *ForeignError) OFD() bool { return e.PID < 0 }

// BriefWait bounds how long multi waits for a lock that may be another
// multi's brief one (an OFD lock, or a node's exec step that has locked
// its pidfile but not yet written its pid) to go or to settle.
const BriefWait = 500 * time.Millisecond

// lockSeen is what F_GETLK reports about the lock that would stop a
// whole-file write lock.
type lockSeen struct {
	locked, write bool
	start, len    int64
	pid           int
}

// classify tells a node's lock (a POSIX write lock on the whole file) from
// any other.
func classify(l lockSeen, path string) (State, int, error) {
	switch {
	case !l.locked:
		return Stale, 0, nil
	case l.write && l.start == 0 && l.len == 0 && l.pid > 0:
		return Running, l.pid, nil
	case l.write && l.start == 0 && l.len == 0 && l.pid == 0:
		return Elsewhere, 0, nil
	}
	kind := "read lock"
	if l.write {
		kind = "write lock"
	}
	if l.pid < 0 {
		kind = "OFD " + kind
	}
	switch {
	case l.start != 0 && l.len == 0:
		kind += fmt.Sprintf(" on bytes %d to the end", l.start)
	case l.len != 0:
		kind += fmt.Sprintf(" on bytes %d-%d", l.start, l.start+l.len-1)
	}
	return Foreign, 0, &ForeignError{Path: path, PID: l.pid, Kind: kind}
}

// Info is a snapshot of a pidfile: the kernel's view of its lock and the
// pid its text names.
type Info struct {
	Path  string
	State State
	// PID is the lock holder as the kernel names it; 0 unless Running.
	PID int
	// LockErr is a [*ForeignError] naming the locker when State is
	// Foreign, else nil.
	LockErr error
	// FilePID is the pid on the file's first line; 0 when the file is
	// absent or its text is not a valid pid (FileErr says why).
	FilePID int
	FileErr error
}

// Mismatch reports whether the file's text names another pid than the
// lock holder. The holder is the truth; the text is only a hint for tools
// that cannot ask the kernel.
func (i Info) Mismatch() bool { return i.State == Running && i.FilePID != i.PID }

// Inspect reports the state of the pidfile at path without changing it. An
// absent file is not an error. A symbolic link, a directory or any other
// non-regular file is, and so is a file this process cannot open.
func Inspect(path string) (Info, error) {
	unlock := lockPath(path)
	defer unlock()
	info := Info{Path: path}
	if owned(path) {
		info.State, info.PID, info.FilePID = Running, os.Getpid(), os.Getpid()
		return info, nil
	}
	h, err := openHandle(path)
	if errors.Is(err, fs.ErrNotExist) {
		return info, nil
	}
	if err != nil {
		return info, err
	}
	defer h.f.Close()
	return h.Snapshot()
}

// Snapshot reports the lock on the open file, as [Inspect] does: who holds
// it, of what kind, and the pid the file's text names.
func (h *Handle) Snapshot() (Info, error) {
	info := Info{Path: h.path}
	l, err := getlk(h.f)
	if err != nil {
		return info, fmt.Errorf("pidfile %s: lock test: %w", h.path, err)
	}
	info.State, info.PID, info.LockErr = classify(l, h.path)
	info.FilePID, info.FileErr = h.ReadPID()
	return info, nil
}

// A Handle is a pidfile opened for reading, so that its lock can be tested
// again and again on the same file, even after it is unlinked or replaced.
// Close it before anything in this process locks or removes the same path.
type Handle struct {
	f    *os.File
	path string
}

// Open opens the pidfile at path for lock tests. The error wraps
// [fs.ErrNotExist] when there is no pidfile.
func Open(path string) (*Handle, error) {
	unlock := lockPath(path)
	defer unlock()
	return openHandle(path)
}

func openHandle(path string) (*Handle, error) {
	f, err := openPidfile(path, os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	return &Handle{f: f, path: path}, nil
}

// openPidfile opens path with flag, never following a symbolic link (in
// its folders too, see [safefs.OpenFolder]), and returns it only if it is a
// regular file nobody planted (see checkRegularIn). O_NONBLOCK: a FIFO
// planted at the path must not hang the open. With O_CREATE the missing
// folders are made. An absent file gives an error that wraps
// [fs.ErrNotExist].
func openPidfile(path string, flag int, perm fs.FileMode) (*os.File, error) {
	d, err := safefs.OpenFolder(filepath.Dir(path), flag&os.O_CREATE != 0)
	if err != nil {
		return nil, describeOpenErr(path, err)
	}
	defer d.Close()
	f, err := d.Open(filepath.Base(path), path, flag, perm)
	if err != nil {
		return nil, describeOpenErr(path, err)
	}
	if err := checkRegularIn(f, path, d); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// Path returns the path the handle was opened at.
func (h *Handle) Path() string { return h.path }

// Holder asks the kernel who holds the lock on the open file: Stale when
// nobody does, Running with the holder's pid, Elsewhere, or Foreign (a
// lock that is not a node's; see [Handle.Snapshot] for what it is).
func (h *Handle) Holder() (State, int, error) { return h.holder() }

func (h *Handle) holder() (State, int, error) {
	l, err := getlk(h.f)
	if err != nil {
		return Stale, 0, fmt.Errorf("pidfile %s: lock test: %w", h.path, err)
	}
	state, pid, _ := classify(l, h.path)
	return state, pid, nil
}

// SameFile reports whether the path still names the file the handle has
// open.
func (h *Handle) SameFile() bool {
	a, err := h.f.Stat()
	if err != nil {
		return false
	}
	b, err := os.Lstat(h.path)
	return err == nil && os.SameFile(a, b)
}

// ReadPID parses the pid on the file's first line (see [ParsePID]).
func (h *Handle) ReadPID() (int, error) {
	buf := make([]byte, 32)
	n, err := h.f.ReadAt(buf, 0)
	if err != nil && err != io.EOF {
		return 0, err
	}
	return ParsePID(buf[:n])
}

// Close closes the handle. It waits for any lock this process holds on the
// same path to be let go first, since closing any descriptor of a file drops
// every POSIX lock the process holds on it.
func (h *Handle) Close() error {
	unlock := lockPath(h.path)
	defer unlock()
	return h.f.Close()
}

// ParsePID parses a pidfile's text: decimal digits and a newline on the
// first line, nothing else on it, a value from 2 to [MaxPID]. Signs, spaces
// and missing newlines are refused rather than guessed at.
func ParsePID(b []byte) (int, error) {
	line, _, ok := bytes.Cut(b, []byte("\n"))
	switch {
	case len(b) == 0:
		return 0, fmt.Errorf("%w: empty", ErrBadPidfile)
	case !ok:
		return 0, fmt.Errorf("%w: no newline after the pid", ErrBadPidfile)
	case len(line) == 0 || len(line) > 7:
		return 0, fmt.Errorf("%w: first line is not a pid", ErrBadPidfile)
	}
	pid := 0
	for _, c := range line {
		if c < '0' || c > '9' {
			return 0, fmt.Errorf("%w: first line %q is not a pid", ErrBadPidfile, line)
		}
		pid = pid*10 + int(c-'0')
	}
	if pid < 2 || pid > MaxPID || line[0] == '0' {
		return 0, fmt.Errorf("%w: pid %s out of range", ErrBadPidfile, line)
	}
	return pid, nil
}

// A Lock is a pidfile locked by the calling process. The lock lasts until
// [Lock.Release] or [Lock.Close], or until the process exits or execs a
// program that closes the descriptor; the kernel drops it at death,
// SIGKILL included.
type Lock struct {
	f    *os.File
	path string
}

// Acquire creates the pidfile's folders if needed, opens the pidfile without
// following a symbolic link, takes a POSIX write lock on the whole file
// without waiting, and writes the caller's pid to it. When another live
// process holds the lock, the error is a [*HeldError] (matching
// [ErrAlreadyRunning]) and the file is left as it was.
func Acquire(path string) (*Lock, error) {
	unlock := lockPath(path)
	defer unlock()
	if owned(path) {
		return nil, &HeldError{Path: path, PID: os.Getpid()}
	}
	f, err := lockFile(path, os.Getpid())
	if err != nil {
		return nil, err
	}
	testHoldLock()
	if err := f.Truncate(0); err != nil {
		return nil, unlinkClose(f, path, fmt.Errorf("pidfile %s: cannot truncate it: %w", path, safefs.BareErr(err)))
	}
	if _, err := f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0); err != nil {
		return nil, unlinkClose(f, path, fmt.Errorf("pidfile %s: cannot write the pid: %w", path, safefs.BareErr(err)))
	}
	l := &Lock{f: f, path: path}
	setOwned(path, true)
	return l, nil
}

// lockFile opens path and takes its lock for the process pid, retrying
// while the holder is a process that is still about to write its pid, or
// another multi's brief OFD lock, and while the path is replaced under it
// (FreeBSD's flopen does the same). The file is created 0600: another user
// who cannot open it cannot lock it either.
func lockFile(path string, pid int) (*os.File, error) {
	const tries = 200
	t0 := time.Now()
	for try := 0; ; try++ {
		f, err := openPidfile(path, os.O_RDWR|os.O_CREATE, 0o600)
		if err != nil {
			return nil, err
		}
		if err := safefs.SetBlocking(f); err != nil {
			f.Close()
			return nil, fmt.Errorf("pidfile %s: %w", path, err)
		}
		err = setlk(f)
		if errors.Is(err, errWouldBlock) {
			h := &Handle{f: f, path: path}
			info, herr := h.Snapshot()
			f.Close()
			if herr != nil {
				return nil, herr
			}
			// A holder whose pid is in the file is a settled instance. Any
			// other node holder is another starter about to write its pid;
			// an OFD lock may be a multi removing a stale file. Both let go
			// or settle within moments. Any other lock is not a node's.
			over := try >= tries || time.Since(t0) > BriefWait
			var fe *ForeignError
			if errors.As(info.LockErr, &fe) && (!fe.OFD() || over) {
				return nil, fe
			}
			if info.State == Elsewhere || (info.State == Running && (info.FilePID == info.PID || over)) {
				return nil, &HeldError{Path: path, PID: info.PID}
			}
			TestMarkBrief()
			backoff(try)
			continue
		}
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("pidfile %s: lock: %w", path, err)
		}
		h := &Handle{f: f, path: path}
		if !h.SameFile() {
			// Removed or replaced between our open and our lock.
			f.Close()
			continue
		}
		return f, nil
	}
}

// File returns the locked file. Its descriptor must stay open, in this
// process or in the program it execs, for as long as the lock should last.
func (l *Lock) File() *os.File { return l.f }

// Path returns the pidfile's path.
func (l *Lock) Path() string { return l.path }

// Release removes the pidfile, if it is still the locked file, and then
// closes it, which drops the lock. Unlinking before closing means no other
// process can lock the old file and find it gone.
func (l *Lock) Release() error {
	unlock := lockPath(l.path)
	defer unlock()
	setOwned(l.path, false)
	return unlinkClose(l.f, l.path, nil)
}

// Close drops the lock and leaves the file in place (stale).
func (l *Lock) Close() error {
	unlock := lockPath(l.path)
	defer unlock()
	setOwned(l.path, false)
	return l.f.Close()
}

// RemoveStale removes the pidfile at path if no process holds its lock. It
// locks the file itself first and checks that the path still names the
// locked file, so it can never remove the pidfile of a node that has just
// started. Its lock is a brief OFD lock (see briefLock), which no other
// multi mistakes for a node. Another multi's brief lock is waited out (up
// to [BriefWait]). An absent file is not an error; a file a node holds is
// a [*HeldError], and one locked otherwise a [*ForeignError].
func RemoveStale(path string) error {
	unlock := lockPath(path)
	defer unlock()
	if owned(path) {
		return &HeldError{Path: path, PID: os.Getpid()}
	}
	t0 := time.Now()
	for try := 0; ; try++ {
		f, err := openPidfile(path, os.O_RDWR, 0)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		err = briefLock(f)
		if err == nil {
			testHoldLock()
			return unlinkClose(f, path, nil)
		}
		if !errors.Is(err, errWouldBlock) {
			f.Close()
			return fmt.Errorf("pidfile %s: lock: %w", path, err)
		}
		h := &Handle{f: f, path: path}
		info, herr := h.Snapshot()
		f.Close()
		var fe *ForeignError
		switch {
		case herr != nil:
			return herr
		case info.State == Running || info.State == Elsewhere:
			return &HeldError{Path: path, PID: info.PID}
		case errors.As(info.LockErr, &fe) && (!fe.OFD() || time.Since(t0) > BriefWait):
			return fe
		}
		// Let go since we tried, or another multi's brief lock: again.
		TestMarkBrief()
		backoff(try)
	}
}

// unlinkClose unlinks path if it still names f, then closes f, and returns
// cause (or the first error met when cause is nil). The name is checked
// and removed in its folder reached again without following an untrusted
// link, so a folder swapped since the open cannot redirect the unlink.
func unlinkClose(f *os.File, path string, cause error) error {
	if d, err := safefs.OpenFolder(filepath.Dir(path), false); err == nil {
		if name := filepath.Base(path); d.SameFile(name, f) {
			if err := d.Remove(name); err != nil && cause == nil && !errors.Is(err, fs.ErrNotExist) {
				cause = fmt.Errorf("pidfile %s: %w", path, safefs.BareErr(err))
			}
		}
		d.Close()
	}
	if err := f.Close(); err != nil && cause == nil {
		cause = err
	}
	return cause
}

// checkRegularIn refuses, on the open file, anything but a regular file,
// and a file that another user owns in a folder others can write to (see
// [safefs.CheckOwner]); d is the folder it was opened in.
func checkRegularIn(f *os.File, path string, d *safefs.Folder) error {
	st, err := f.Stat()
	if err != nil {
		return fmt.Errorf("pidfile %s: %w", path, safefs.BareErr(err))
	}
	if !st.Mode().IsRegular() {
		return fmt.Errorf("%w: %s is %s, not a regular file", ErrBadPidfile, path, safefs.DescribeType(st.Mode()))
	}
	dst, err := d.Stat()
	if err != nil {
		return fmt.Errorf("pidfile %s: folder: %w", path, safefs.BareErr(err))
	}
	if err := safefs.CheckOwner(st, d.Path(), dst); err != nil {
		return fmt.Errorf("%w: %s: %w", ErrBadPidfile, path, err)
	}
	if err := safefs.CheckOneLink(st); err != nil {
		return fmt.Errorf("%w: %s: %w", ErrBadPidfile, path, err)
	}
	return nil
}

// describeOpenErr names the pidfile in an error from opening it, and
// tells a planted link or directory (ErrBadPidfile) from any other error.
func describeOpenErr(path string, err error) error {
	var le *safefs.UnsafeLinkError
	if errors.As(err, &le) {
		return fmt.Errorf("%w: %s: %w", ErrBadPidfile, path, err)
	}
	if safefs.IsSymlinkErr(err) {
		return fmt.Errorf("%w: %s is a symbolic link (not followed)", ErrBadPidfile, path)
	}
	if safefs.IsDirErr(err) {
		return fmt.Errorf("%w: %s is a directory", ErrBadPidfile, path)
	}
	var pe *fs.PathError
	if errors.As(err, &pe) && pe.Path == path {
		return fmt.Errorf("pidfile %s: %w", path, pe.Err)
	}
	return fmt.Errorf("pidfile %s: %w", path, err)
}

// backoff sleeps a little longer on each try: 50µs doubling to 10ms.
func backoff(try int) {
	d := 50 * 1000 << min(try, 8)
	sleep(d)
}

// POSIX locks belong to the process, and closing any descriptor of a file
// drops every lock the process holds on it. So operations in this process
// that lock, or close a descriptor of, the same pidfile take turns.
var (
	pathMu   sync.Mutex
	pathLock = map[string]*sync.Mutex{}
	ownedSet = map[string]bool{}
)

func lockPath(path string) (unlock func()) {
	pathMu.Lock()
	mu := pathLock[path]
	if mu == nil {
		mu = new(sync.Mutex)
		pathLock[path] = mu
	}
	pathMu.Unlock()
	mu.Lock()
	return mu.Unlock
}

func owned(path string) bool {
	pathMu.Lock()
	defer pathMu.Unlock()
	return ownedSet[path]
}

func setOwned(path string, on bool) {
	pathMu.Lock()
	defer pathMu.Unlock()
	if on {
		ownedSet[path] = true
	} else {
		delete(ownedSet, path)
	}
}
