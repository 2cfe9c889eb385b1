//go:build unix && !linux

package multi

// nameStep has nothing to do: the step is started by its program's path,
// which names it.
func nameStep() {}
