package nodes

import "golang.org/x/sys/unix"

// oPath opens the folders of a walk for the *at calls only: it needs no
// read permission on them, as a path lookup needs none.
const oPath = unix.O_PATH
