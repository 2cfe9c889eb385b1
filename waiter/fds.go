package waiter

import (
	"errors"
	"syscall"
)

// fdReserve is what [DescriptorBudget] keeps back for everything else a
// command does while it waits: the runtime's poller, an fsnotify watcher,
// removing a pidfile, writing a record, printing.
const fdReserve = 16

// DescriptorBudget returns how many more descriptors this process may open,
// from its soft RLIMIT_NOFILE less the descriptors open now and a reserve:
// zero or more, and a large number where there is no such limit. Callers
// that open descriptors per node size their concurrency from it, so that a
// low limit (ulimit -n 64) slows them down instead of failing nodes.
func DescriptorBudget() int {
	limit, inUse, ok := descriptorLimit()
	if !ok {
		return maxBudget
	}
	return max(0, min(limit-inUse-fdReserve, maxBudget))
}

// maxBudget stands for "no limit worth counting".
const maxBudget = 1 << 20

// outOfDescriptors reports whether err is EMFILE or ENFILE: a descriptor
// could not be had now, which says nothing about the node, so the caller
// tries again once one is free.
func outOfDescriptors(err error) bool {
	return errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE)
}
