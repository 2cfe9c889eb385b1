package waiter_test

// pidfdWakeups: on Linux the notify strategy sees a SIGKILL through a pidfd.
const pidfdWakeups = true
