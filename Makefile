# multi: see README.md. `make demo` runs the main job, `make test` the tests.
GO ?= go
BIN := bin/multi

PREFIX ?= /usr/local

.PHONY: build test test-contrib vet vet-cross fmt-check demo clean fuzz bench install

build:
	$(GO) build -o $(BIN) .

vet:
	$(GO) vet ./...

# The code builds on every Unix and on Windows: so must its tests.
vet-cross:
	GOOS=windows $(GO) vet ./...
	GOOS=darwin $(GO) vet ./...
	GOOS=freebsd $(GO) vet ./...

fmt-check:
	@out=$$(gofmt -l .); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

# vet (here and for other systems), gofmt, then every test with the race detector (the integration
# scripts build and drive a race-enabled binary).
test: vet vet-cross fmt-check test-contrib
	$(GO) test -race -count=1 ./...

# The recipes in contrib/ (Kubernetes, Nomad) checked offline against the
# real API types, in a module of its own so that multi's go.mod stays as it
# is (fetches k8s.io/api and hcl through the Go module proxy once).
test-contrib:
	cd contrib/manifests && $(GO) vet ./... && $(GO) test -count=1 ./...

demo: build
	@bash testdata/demo.sh $(BIN)

# multi against start-stop-daemon, supervisord and celery multi, and the Go
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
