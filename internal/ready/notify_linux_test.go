package ready_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/multi-launcher/multi/internal/ready"
)

// A node's notify socket is removed by its Close only while its name is
// still that socket: a start of the node since (a restart under run)
// bound a new one there, which the old one's late Close must not remove.
func TestNotifyCloseLeavesTheNextSocket(t *testing.T) {
	dir := t.TempDir()
	old, err := ready.ListenNotify(dir, "w1")
	if err != nil {
		t.Fatal(err)
	}
	next, err := ready.ListenNotify(dir, "w1")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, ".w1.notify")
	old.Close()
	if _, err := os.Lstat(path); err != nil {
		t.Fatalf("the old socket's Close removed the new one: %v", err)
	}
	next.Close()
	if _, err := os.Lstat(path); !os.IsNotExist(err) {
		t.Fatalf("the socket after its own Close: %v; want it removed", err)
	}
}
