//go:build !unix

package fdwait

// limitText names the limit.
func limitText() string { return "the descriptor limit" }
