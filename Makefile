# multi: see README.md. `make demo` runs the main job, `make test` the tests.
GO ?= go
BIN := bin/multi

PREFIX ?= /usr/local

.PHONY: build test test-arm64 test-contrib vet vet-cross fmt-check demo clean fuzz bench install

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

vet:
	$(GO) vet ./...

# The code builds on every Unix and on Windows: so must its tests. linux/arm64
# has no fork path (its vfork is amd64 assembly): every start there takes
# the exec step.
vet-cross:
	GOOS=windows $(GO) vet ./...
	GOOS=darwin $(GO) vet ./...
	GOOS=freebsd $(GO) vet ./...
	GOOS=linux GOARCH=arm64 $(GO) vet ./...

fmt-check:
	@out=$$(gofmt -l .); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

# -race needs cgo and a C compiler; without them make test runs without it, and says so.
RACE := $(shell [ "$$($(GO) env CGO_ENABLED)" = 1 ] && command -v "$$($(GO) env CC)" >/dev/null 2>&1 && echo -race)

# vet (here and for other systems), gofmt, then every test with the race detector when there is a
# C compiler (the integration scripts then build and drive a race-enabled binary too).
test: vet vet-cross fmt-check test-contrib
	@[ -n "$(RACE)" ] || echo "make test: -race needs cgo and a C compiler (CGO_ENABLED=$$($(GO) env CGO_ENABLED), CC=$$($(GO) env CC)): running the tests WITHOUT the race detector"
	$(GO) test -tags '$(TAGS)' $(RACE) -count=1 ./...

# Every test again on linux/arm64, under qemu-user (installs nothing; as
# root, registers qemu-aarch64 with binfmt_misc if needed): see
# testdata/test-arm64.sh and docs/reliability.md, "arm64 under qemu".
test-arm64:
	@GO=$(GO) bash testdata/test-arm64.sh

# The recipes in contrib/ (Kubernetes, Nomad) checked offline against the
# real API types, in a module of its own so that multi's go.mod stays as it
# is (fetches k8s.io/api and hcl through the Go module proxy once).
test-contrib:
	cd contrib/manifests && $(GO) vet ./... && $(GO) test -count=1 ./...

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
