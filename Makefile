# yarn-er: build, tests and the demo. See CONTRIBUTING.md and docker/README.md.
SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := build

GO        ?= go
BIN       := bin
MINI_YARN := docker/mini-yarn
# go test's own deadline for the integration run: it starts up to two clusters.
INTEGRATION_TIMEOUT ?= 30m
# -v streams the cluster's start-up and each test's result (CI logs); override to quieten.
INTEGRATION_FLAGS ?= -v
FUZZTIME  ?= 10s
# extra go test flags for fuzzing (e.g. -parallel=1) and a regexp picking targets (all when empty)
FUZZFLAGS ?=
FUZZ_RUN  ?=

.PHONY: build unit unit-short vet integration test demo fuzz fuzz-smoke harness flink flink-golden clean help

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed 's/:.*## /\t/'

build: ## go build ./cmd/yarn-er into bin/
	@mkdir -p $(BIN)
	$(GO) build -o $(BIN)/yarn-er ./cmd/yarn-er

vet: ## gofmt and go vet, with and without the integration tag
	@out=$$(gofmt -l $$(git ls-files --cached --others --exclude-standard '*.go')); \
	  if [[ -n $$out ]]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) vet -tags integration ./integration/...

unit: ## unit tests with the race detector (what CI runs)
	$(GO) test -race ./...

unit-short: ## unit tests with the race detector, the 64-process stress test cut down (-short)
	$(GO) test -race -short ./...

harness: ## build the mini-YARN harness (Maven, cached)
	$(MINI_YARN) build

flink: ## build the Flink distribution and GPU report job of docker/flink (Maven, cached)
	docker/flink/build

integration: harness flink ## integration tests against a mini-YARN that TestMain starts and stops
	$(GO) test -tags integration -count=1 -timeout $(INTEGRATION_TIMEOUT) $(INTEGRATION_FLAGS) ./integration/...

test: unit integration ## unit tests, then integration tests

# The recordings are committed; `go test ./profile/` compares yarn-er with them (TestFlinkGolden).
flink-golden: ## re-record profile/testdata/flink-golden/ with Flink 1.20.0 and 2.0.0's own classes (Maven)
	docker/flink-golden/record

# The demo runs yarn-er against the bundled mini-YARN, then stops it (also on failure).
demo: build harness flink ## translate, cluster nodes, preflight and a Flink GPU job against the bundled mini-YARN (good and misconfigured)
	examples/demo.sh

fuzz: ## run every fuzz target for FUZZTIME (default 10s; a count like 2000x works too); fails only on a finding
	FUZZTIME='$(FUZZTIME)' FUZZFLAGS='$(FUZZFLAGS)' FUZZ_RUN='$(FUZZ_RUN)' GO='$(GO)' bench/fuzz.sh

fuzz-smoke: fuzz ## the former name of fuzz

clean: ## remove bin/, the harness build and the Flink builds
	rm -rf $(BIN) docker/harness/target docker/flink/target docker/flink-golden/target
