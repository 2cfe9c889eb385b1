//go:build !unix

package pidfile

import (
	"errors"
	"os"
)

var errWouldBlock = errors.New("lock held")

// Pidfile locks need POSIX record locks; elsewhere every lock operation
// fails with errors.ErrUnsupported.
func setlk(f *os.File) error             { return errors.ErrUnsupported }
func briefLock(f *os.File) error         { return errors.ErrUnsupported }
func getlk(f *os.File) (lockSeen, error) { return lockSeen{}, errors.ErrUnsupported }
func briefUnlock(f *os.File) error       { return errors.ErrUnsupported }

// readHead reads the start of f into buf.
func readHead(f *os.File, buf []byte) (int, error) { return f.ReadAt(buf, 0) }

// Without POSIX locks no file is ever held by this process.
func fileIDOf(f *os.File) (fileID, bool)  { return fileID{}, false }
func fileIDAt(path string) (fileID, bool) { return fileID{}, false }
