package launch

import (
	"os"
	"strings"
)

// LookPATH is the $PATH a node's command is looked up on, as os/exec does
// it: the node's environment's own PATH if it sets one, else this
// process's; ok is false when neither has one.
func LookPATH(env []string) (path string, ok bool) {
	for _, kv := range env {
		if v, found := strings.CutPrefix(kv, "PATH="); found {
			path, ok = v, true // the last one is the one that counts
		}
	}
	if ok {
		return path, true
	}
	return os.LookupEnv("PATH")
}
