package nodes_test

import (
	"fmt"

	"github.com/multi-launcher/multi/nodes"
)

// Expand a set of celery-style names and templates without touching any
// file.
func ExampleSpec_Nodes() {
	ns, err := nodes.Spec{
		Names:   []string{"3"},
		Host:    "example.com",
		RunDir:  "/run/app",
		Command: []string{"app", "--port=80%i", "--name=%h"},
		Options: []nodes.Option{{Name: "-c", Value: "4", HasValue: true, Scope: "2-3"}},
	}.Nodes()
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, n := range ns {
		fmt.Println(n.FullName(), n.PidFile, nodes.Quote(n.Command))
	}
	// Output:
	// celery1@example.com /run/app/celery1.pid app --port=801 --name=celery1@example.com
	// celery2@example.com /run/app/celery2.pid app --port=802 --name=celery2@example.com -c 4
	// celery3@example.com /run/app/celery3.pid app --port=803 --name=celery3@example.com -c 4
}

// Give different nodes different commands: one Spec each, joined. The
// second Spec's nodes continue the index, so %i never repeats.
func ExampleJoin() {
	ns, err := nodes.Join(
		nodes.Spec{Names: []string{"web1", "web2"}, Host: "example.com", RunDir: "/run/app",
			Command: []string{"web", "--port=80%i"}},
		nodes.Spec{Names: []string{"2"}, Host: "example.com", RunDir: "/run/app",
			Command: []string{"worker", "--id=%i"}},
	)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, n := range ns {
		fmt.Println(n.Index, n.Name, n.PidFile, nodes.Quote(n.Command))
	}
	// Output:
	// 1 web1 /run/app/web1.pid web --port=801
	// 2 web2 /run/app/web2.pid web --port=802
	// 3 celery3 /run/app/celery3.pid worker --id=3
	// 4 celery4 /run/app/celery4.pid worker --id=4
}
