package waiter_test

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/multi-launcher/multi/nodes/pidfile"
)

// The test binary locks N pidfiles in DIR when started with this variable
// set to "N:DIR", prints "locked" and holds them until stdin closes.
const holdManyEnv = "WAITER_TEST_HOLD_MANY"

func holdMany(v string) {
	n, dir, _ := strings.Cut(v, ":")
	count, _ := strconv.Atoi(n)
	var locks []*pidfile.Lock
	for i := range count {
		l, err := pidfile.Acquire(filepath.Join(dir, fmt.Sprintf("p%d.pid", i)))
		if err != nil {
			fmt.Println("error:", err)
			os.Exit(1)
		}
		locks = append(locks, l)
	}
	fmt.Println("locked")
	io.Copy(io.Discard, os.Stdin)
	os.Exit(0) // the locks go with the process; the files stay, stale
}
