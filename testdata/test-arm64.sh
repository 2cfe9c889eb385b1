#!/usr/bin/env bash
# make test-arm64, CI's slow stage: the tests of the packages whose
# behaviour differs by architecture, cross-built for linux/arm64 and run
# under qemu-user: internal/launch (linux/amd64 forks a node directly,
# linux/arm64 has no such path: every start takes the exec step),
# internal/step (that exec step), multi (the library that starts and
# stops nodes through them) and the integration scripts (they build their own arm64 multi,
# orchestrator and selfnode with -tags multitest). ARM64_PKGS names other
# packages (make test-arm64 ARM64_PKGS=./... runs every package's). Installs
# nothing: needs qemu-aarch64 (Debian: apt-get install qemu-user-static,
# which .ci/run does) and, as root, registers it with binfmt_misc when it is
# not yet, because the test binaries re-execute themselves (the exec step,
# fakenode) and the nodes they start must run too.
# Without cgo there is no -race here: make test runs the race detector.
# -short: the integration tests whose subject is the same on every
# architecture and which are slow under the emulator (the pid-namespace
# units, podman, celery's form, the CLI's grammar) skip; make test runs
# them.
set -euo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}

if ! command -v qemu-aarch64-static >/dev/null && ! command -v qemu-aarch64 >/dev/null; then
	echo "test-arm64: qemu-aarch64 not found (Debian: apt-get install qemu-user-static)" >&2
	exit 2
fi
bm=/proc/sys/fs/binfmt_misc
if [ ! -e $bm/qemu-aarch64 ]; then
	conf=/usr/lib/binfmt.d/qemu-aarch64.conf
	if [ "$(id -u)" != 0 ] || [ ! -r $conf ]; then
		echo "test-arm64: qemu-aarch64 is not registered with binfmt_misc; as root: cat $conf > $bm/register" >&2
		exit 2
	fi
	[ -e $bm/status ] || mount -t binfmt_misc binfmt_misc $bm
	cat $conf > $bm/register
fi
if ! head -1 $bm/qemu-aarch64 | grep -qx enabled; then
	echo "test-arm64: the binfmt_misc entry $bm/qemu-aarch64 is disabled" >&2
	exit 2
fi

# rerunPattern is the -test.run pattern of the tests the go test output
# in $1 says failed (top-level ones, and TestScripts' scripts); it fails
# when there are none.
rerunPattern() {
	local top sub
	top=$(sed -n 's/^--- FAIL: \(Test[A-Za-z0-9_]*\)[ /].*/\1/p' "$1" | sort -u | paste -sd'|')
	sub=$(sed -n 's/^ *--- FAIL: TestScripts\/\([A-Za-z0-9_.-]*\) .*/\1/p' "$1" | sort -u | paste -sd'|')
	[ -n "$top" ] || return 1
	if [ -n "$sub" ]; then
		echo "^($top)\$/^($sub)\$"
	else
		echo "^($top)\$"
	fi
}

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
# Built for this machine: runs the tests with signals 32 and 33 at their
# default (make ignores them in its recipes; see testdata/sigdfl).
CGO_ENABLED=0 GOOS= GOARCH= "$GO" build -o "$out/sigdfl" ./testdata/sigdfl
export GOOS=linux GOARCH=arm64 CGO_ENABLED=0
# qemu-user now and then deadlocks the child of a fork when other threads
# of the Go program run at that moment (a plain loop of os/exec hangs in 3
# runs of 10 under qemu 7.2 and 10.0, none of 12 with one P): one P for
# every emulated Go program, the nodes included. -test.parallel keeps the
# parallel tests as parallel as go test makes them natively.
export GOMAXPROCS=1
par=$(nproc)
read -r -a pkgs <<<"${ARM64_PKGS:-./internal/launch ./internal/step ./multi ./integration}"
# Listed first: a name go list does not know fails here, not as an empty loop.
list=$("$GO" list -f '{{.ImportPath}} {{.Dir}}' "${pkgs[@]}")
fail=()
start=$SECONDS
# Package by package, one at a time: the machine's cores go to the emulator.
while read -r pkg dir; do
	bin=$out/$(basename "$dir").$RANDOM.test
	"$GO" test -c -o "$bin" "$pkg"
	[ -e "$bin" ] || continue # no test files
	t=$SECONDS
	# In the package's folder, as go test runs it; GOARCH stays set for the
	# integration tests' own go build.
	log=$out/$(basename "$dir").log
	if (cd "$dir" && "$out/sigdfl" "$bin" -test.count=1 -test.short -test.parallel="$par" -test.timeout=20m) 2>&1 | tee "$log"; then
		echo "ok   $pkg $((SECONDS - t))s (linux/arm64, qemu)"
		continue
	fi
	# The integration tests kill a fork child qemu-user deadlocked before
	# its exec (see breakStuckForks) and say so: the emulator's fault, not
	# the test's. Then, and only then, the tests that failed run once more.
	if grep -q 'emulator: killed a fork child stuck before its exec' "$log" && again=$(rerunPattern "$log"); then
		echo "test-arm64: $pkg: qemu-user deadlocked a fork (see above); running what failed once more: -test.run '$again'"
		if (cd "$dir" && "$out/sigdfl" "$bin" -test.count=1 -test.short -test.parallel="$par" -test.timeout=10m -test.run "$again"); then
			echo "ok   $pkg $((SECONDS - t))s (linux/arm64, qemu; passed when run again)"
			continue
		fi
	fi
	echo "FAIL $pkg $((SECONDS - t))s (linux/arm64, qemu)"
	fail+=("$pkg")
done <<<"$list"
echo "test-arm64: $((SECONDS - start))s"
if [ ${#fail[@]} -gt 0 ]; then
	echo "test-arm64: FAILED: ${fail[*]}" >&2
	exit 1
fi
