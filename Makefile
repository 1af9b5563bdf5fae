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

.PHONY: build unit vet integration test demo fuzz-smoke harness flink-golden clean help

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

unit: ## unit tests
	$(GO) test ./...

harness: ## build the mini-YARN harness (Maven, cached)
	$(MINI_YARN) build

integration: harness ## integration tests against a mini-YARN that TestMain starts and stops
	$(GO) test -tags integration -count=1 -timeout $(INTEGRATION_TIMEOUT) $(INTEGRATION_FLAGS) ./integration/...

test: unit integration ## unit tests, then integration tests

# The recordings are committed; `go test ./profile/` compares yarn-er with them (TestFlinkGolden).
flink-golden: ## re-record profile/testdata/flink-golden/ with Flink 1.20.0 and 2.0.0's own classes (Maven)
	docker/flink-golden/record

# The demo runs yarn-er against the bundled mini-YARN, then stops it (also on failure).
demo: build harness ## translate, cluster nodes and preflight against the bundled mini-YARN (good and misconfigured)
	examples/demo.sh

fuzz-smoke: ## run every fuzz target for FUZZTIME (default 10s) each
	@for pkg in $$($(GO) list ./...); do \
	  for fz in $$($(GO) test -list '^Fuzz' "$$pkg" | grep '^Fuzz' || true); do \
	    echo "== $$pkg $$fz"; \
	    $(GO) test -run '^$$' -fuzz "^$$fz$$" -fuzztime $(FUZZTIME) "$$pkg"; \
	  done; \
	done

clean: ## remove bin/ and the harness build
	rm -rf $(BIN) docker/harness/target docker/flink-golden/target
