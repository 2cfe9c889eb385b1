package nodes_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/multi-launcher/multi/nodes"
)

// TestTemplateLayers pins what sets the host layer (names, prefixes, host
// parts) apart from the node layer (files, command) now that one expander
// serves both: %N and %p are node letters only, and each layer's error for
// an unknown letter says which letters it knows.
func TestTemplateLayers(t *testing.T) {
	t.Parallel()
	const hostHint = "(names know %h %n %d %i %I %%)"
	const nodeHint = "(write %% for a literal %)"
	tests := []struct {
		spec nodes.Spec
		text string
	}{
		{nodes.Spec{Names: []string{"w%N"}}, `unknown %N in "w%N" ` + hostHint},
		{nodes.Spec{Names: []string{"w%p"}}, `unknown %p in "w%p" ` + hostHint},
		{nodes.Spec{Names: []string{"w1"}, Prefix: "%z"}, `unknown %z in "%z" ` + hostHint},
		{nodes.Spec{Names: []string{"w1"}, Host: "h%N"}, `unknown %N in "h%N" ` + hostHint},
		{nodes.Spec{Names: []string{"w1"}, Command: []string{"%z"}}, `unknown %z in "%z" ` + nodeHint},
		{nodes.Spec{Names: []string{"w1"}, PidFile: "/x/%z"}, `unknown %z in "%z" ` + nodeHint},
	}
	for _, tt := range tests {
		tt.spec.RunDir = "/r"
		_, err := tt.spec.Nodes()
		if !errors.Is(err, nodes.ErrBadTemplate) || !strings.Contains(err.Error(), tt.text) {
			t.Errorf("%+v: error %v; want ErrBadTemplate containing %q", tt.spec, err, tt.text)
		}
	}
	// The same letters mean the node in the node layer.
	ns, err := nodes.Spec{Names: []string{"w1"}, Host: "ex", RunDir: "/r",
		Command: []string{"%N", "%p", "%h", "%i%I"}}.Nodes()
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Join(ns[0].Command, " "), "w1 w1@ex w1@ex 1"; got != want {
		t.Errorf("command %q; want %q", got, want)
	}
}
