# multi: see README.md. `make demo` runs the main job, `make test` the tests.
GO ?= go
BIN := bin/multi

PREFIX ?= /usr/local

.PHONY: build test test-checks test-arm64 test-contrib vet vet-cross vet-windows vet-darwin vet-freebsd vet-linux-arm64 fmt-check demo clean fuzz bench install

# --version names the commit: the go command records it itself (not in a git
# worktree, nor with GOFLAGS=-buildvcs=false), so make passes it too.
VCS_REVISION := $(shell git rev-parse HEAD 2>/dev/null)
VCS_MODIFIED := $(shell git status --porcelain 2>/dev/null | grep -q . && echo true || echo false)
LDFLAGS := -X github.com/multi-launcher/multi/internal/cli.vcsRevision=$(VCS_REVISION) -X github.com/multi-launcher/multi/internal/cli.vcsModified=$(VCS_MODIFIED)

# urfave/cli's man page generator (and the Markdown renderer it links, whose
# init ran in every node's exec step) is left out: multi man has its own.
# A plain go build, without the tag, builds and works the same.
TAGS := urfave_cli_no_docs

build:
	$(GO) build -tags '$(TAGS)' -ldflags '$(LDFLAGS)' -o $(BIN) .

# With make test's build flags (tags, -race): go vet then compiles the very
# packages go test runs, once, and go test need not vet them again.
# The programs under testdata folders (which ./... leaves out) too.
TESTDATA_PROGS := ./integration/testdata/orchestrator ./integration/testdata/selfnode ./testdata/bench/driver ./testdata/bench/readynode ./testdata/sigdfl
vet:
	$(GO) vet -tags '$(TAGS)' $(RACE) ./... $(TESTDATA_PROGS)

# The code builds on every Unix and on Windows: so must its tests. linux/arm64
# has no fork path (its vfork is amd64 assembly): every start there takes
# the exec step. One target per system, so that make -j vets them side by side.
vet-cross: vet-windows vet-darwin vet-freebsd vet-linux-arm64
vet-windows vet-darwin vet-freebsd:
	GOOS=$(@:vet-%=%) $(GO) vet ./...
vet-linux-arm64:
	GOOS=linux GOARCH=arm64 $(GO) vet ./...

fmt-check:
	@out=$$(gofmt -l .); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

# -race needs cgo and a C compiler; without them make test runs without it, and says so.
RACE := $(shell [ "$$($(GO) env CGO_ENABLED)" = 1 ] && command -v "$$($(GO) env CC)" >/dev/null 2>&1 && echo -race)

# make test, CI's fast gate. First the checks (the contrib recipes, vet
# here and for the other systems, gofmt), CHECK_JOBS at a time, each one's
# output printed whole when it ends; then every test with the race
# detector when there is a C compiler (the integration scripts whose
# multi runs goroutines side by side then drive a race-enabled build of
# it too), with nothing else running: some tests count time. go test does not vet again: make vet did, with the
# same flags. TESTFLAGS go to go test (-run, -v, -parallel ...).
TEST_CHECKS := test-contrib vet vet-cross fmt-check
CHECK_JOBS ?= 2
test:
	@$(MAKE) --no-print-directory -j$(CHECK_JOBS) --output-sync=target test-checks
	@[ -n "$(RACE)" ] || echo "make test: -race needs cgo and a C compiler (CGO_ENABLED=$$($(GO) env CGO_ENABLED), CC=$$($(GO) env CC)): running the tests WITHOUT the race detector"
	$(GO) test -tags '$(TAGS)' $(RACE) -vet=off -count=1 $(TESTFLAGS) ./...
test-checks: $(TEST_CHECKS)

# CI's slow stage: the tests of the packages whose behaviour differs by
# architecture (internal/launch, internal/step, multi, integration) again on linux/arm64, under qemu-user
# (installs nothing; as root, registers qemu-aarch64 with binfmt_misc if
# needed): see testdata/test-arm64.sh and docs/reliability.md, "arm64
# under qemu". make test-arm64 ARM64_PKGS=./... runs every package's.
test-arm64:
	@GO=$(GO) ARM64_PKGS='$(ARM64_PKGS)' bash testdata/test-arm64.sh

# The recipes in contrib/ (Kubernetes, Nomad) checked offline against the
# real API types, in a module of its own so that multi's go.mod stays as it
# is (fetches k8s.io/api and hcl through the Go module proxy once).
test-contrib:
	cd contrib/manifests && $(GO) vet ./... && $(GO) test -vet=off -count=1 ./...

demo: build
	@bash testdata/demo.sh $(BIN)

# multi against s6, start-stop-daemon (sequential and -P), supervisord and
# celery multi, on tmpfs and on disk, and the Go
# benchmarks; installs the peers from Debian if missing. See
# docs/benchmarks.md (knobs: BENCH_NS, BENCH_ROUNDS, ...).
bench: build
	@bash testdata/bench/bench.sh $(BIN)

# The binary, its manual page (generated from the CLI definition) and the
# shell completions.
install: build
	install -D -m 0755 $(BIN) $(DESTDIR)$(PREFIX)/bin/multi
	mkdir -p $(DESTDIR)$(PREFIX)/share/man/man1 $(DESTDIR)$(PREFIX)/share/bash-completion/completions $(DESTDIR)$(PREFIX)/share/zsh/site-functions
	$(BIN) man > $(DESTDIR)$(PREFIX)/share/man/man1/multi.1
	$(BIN) completion bash > $(DESTDIR)$(PREFIX)/share/bash-completion/completions/multi
	$(BIN) completion zsh > $(DESTDIR)$(PREFIX)/share/zsh/site-functions/_multi

clean:
	rm -rf bin
