//go:build race

package integration

// raceBuild is how binary builds the programs the scripts drive: with the
// race detector when the tests themselves have it (it needs cgo and a C
// compiler; make test does without when there is none).
var raceBuild = []string{"-race"}
