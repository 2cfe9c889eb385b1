# multi: see README.md. `make demo` runs the main job, `make test` the tests.
GO ?= go
BIN := bin/multi

.PHONY: build test vet fmt-check demo clean fuzz

build:
	$(GO) build -o $(BIN) .

vet:
	$(GO) vet ./...

fmt-check:
	@out=$$(gofmt -l .); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

# vet, gofmt, then every test with the race detector (the integration
# scripts build and drive a race-enabled binary).
test: vet fmt-check
	$(GO) test -race -count=1 ./...

demo: build
	@bash testdata/demo.sh $(BIN)

clean:
	rm -rf bin
