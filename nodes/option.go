package nodes

// An Option is an option for the nodes' command, or a per-node flag of
// multi's own, as given on the command line.
type Option struct {
	// Name is the option with its dashes: "-c", "--loglevel".
	Name string
	// Value is its value, if HasValue.
	Value    string
	HasValue bool
	// Scope is the node list after ':' ("1-3", "w1,w2", "w1@host"); ""
	// means every node.
	Scope string
}
