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
# The Hadoop lines `make matrix` runs the integration suite on (docs/hadoop-versions.md). The
# default line, used by `make test` and `make demo`, is harness/pom.xml's hadoop.version (3.5.0).
MATRIX_VERSIONS ?= 3.2.2 3.3.6 3.4.2 3.5.0

.PHONY: build unit vet integration matrix test demo fuzz-smoke harness clean help

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

# One line after another (each run starts its own clusters); every line runs even if an earlier
# one failed, and the summary names the failed ones and each line's time.
matrix: ## integration tests on every Hadoop line of MATRIX_VERSIONS
	@failed=""; summary=""; \
	for v in $(MATRIX_VERSIONS); do \
	  echo "== Hadoop $$v"; t0=$$SECONDS; \
	  if MINI_YARN_HADOOP_VERSION=$$v $(MINI_YARN) build && \
	     MINI_YARN_HADOOP_VERSION=$$v $(GO) test -tags integration -count=1 -timeout $(INTEGRATION_TIMEOUT) $(INTEGRATION_FLAGS) ./integration/...; then \
	    r=ok; else r=FAILED; failed="$$failed $$v"; fi; \
	  summary="$$summary\n  Hadoop $$v: $$r in $$((SECONDS - t0))s"; \
	done; \
	printf "== matrix:$$summary\n"; \
	if [[ -n $$failed ]]; then echo "matrix failed on:$$failed"; exit 1; fi

test: unit integration ## unit tests, then integration tests

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

clean: ## remove bin/ and the harness builds (every Hadoop version)
	rm -rf $(BIN) docker/harness/target
