package multi

// The verbs' unexported errors, for the tests in package multi_test.
var (
	ErrCannotRestart     = errCannotRestart
	ErrStopSignal        = errStopSignal
	ErrUnconfirmedHolder = errUnconfirmedHolder
)
