//go:build !unix

package nodes

import (
	"errors"
	"os"
	"time"
)

const (
	oNoFollow = 0
	oNonblock = 0
)

var errWouldBlock = errors.New("lock held")

// Pidfile locks need POSIX record locks; elsewhere every lock operation
// fails with errors.ErrUnsupported.
func setlk(f *os.File) error             { return errors.ErrUnsupported }
func briefLock(f *os.File) error         { return errors.ErrUnsupported }
func getlk(f *os.File) (lockSeen, error) { return lockSeen{}, errors.ErrUnsupported }
func setBlocking(f *os.File) error       { return nil }
func sleep(ns int)                       { time.Sleep(time.Duration(ns)) }

func isSymlinkErr(err error) bool { return false }

func isDirErr(err error) bool { return false }
