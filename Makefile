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
# The Hadoop lines `make matrix` (and so `make test`) runs the integration suite on
# (docs/hadoop-versions.md). The default line, used by `make integration` and `make demo`, is
# harness/pom.xml's hadoop.version.
MATRIX_VERSIONS ?= 3.2.2 3.3.6 3.4.2 3.5.0
DEFAULT_HADOOP  := 3.5.0
# The Flink end-to-end tests run on the default line only: they exercise Flink and yarn-er's
# discovery, and their classpath is the default line's shaded client jars (docs/hadoop-versions.md).
# So do the HA fault tests: the harness's --ha needs Hadoop 3.5 (two RM web apps in one JVM share
# one Guice pipeline on 3.4 and older); the other fault tests run on every line. The GPU plugin mode's
# test reads the NodeManagers' web endpoint, which the mini-YARN serves on 3.5 only. The placement
# tests (TestPlacement*: SchedulingRequests under docker/conf's placement-constraints.handler
# scheduler) run on every line: the CapacityScheduler places them on 3.2.2 to 3.5.0. The
# long-running token test (three 90 s token lifetimes) runs on the default line only.
MATRIX_SKIP_OTHER_LINES ?= ^(TestFlink|TestHA|TestGPUPlugin|TestDoctorTimeout|TestSecureLongRunningTokens)
# The secure suite (TestSecure*: Kerberos, SASL layers, TLS) runs on the default line and on these.
MATRIX_SECURE_LINES ?= 3.3.6

# go-nvml's generated cgo prologue calls NVML functions its own header marks deprecated, and gcc
# warns about each one (about a hundred lines) whenever the package is compiled afresh: noise about
# a dependency, on the first screen of `make demo`. Only that warning is turned off; real errors
# and every other warning stay visible. A CGO_CFLAGS of the caller's is kept.
export CGO_CFLAGS := $(or $(CGO_CFLAGS),-O2 -g) -Wno-deprecated-declarations

.PHONY: build unit unit-short vet integration matrix test demo fuzz fuzz-smoke harness flink flink-golden clean help

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed 's/:.*## /\t/'

build: ## go build ./cmd/yarn-er and the small ApplicationMaster ./cmd/yarn-er-am into bin/
	@mkdir -p $(BIN)
	$(GO) build -o $(BIN)/yarn-er ./cmd/yarn-er
	CGO_ENABLED=0 $(GO) build -o $(BIN)/yarn-er-am ./cmd/yarn-er-am

vet: ## gofmt and go vet, with and without the integration tag
	@out=$$(gofmt -l $$(git ls-files --cached --others --exclude-standard '*.go')); \
	  if [[ -n $$out ]]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) vet -tags integration ./integration/...
	$(GO) vet -tags container ./integration/container/

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

# One line after another (each run starts its own clusters); every line runs even if an earlier
# one failed, and the summary names the failed ones and each line's time.
matrix: flink ## integration tests on every Hadoop line of MATRIX_VERSIONS
	@failed=""; summary=""; \
	for v in $(MATRIX_VERSIONS); do \
	  echo "== Hadoop $$v"; t0=$$SECONDS; skip=(); \
	  if [[ $$v != $(DEFAULT_HADOOP) && -n "$(MATRIX_SKIP_OTHER_LINES)" ]]; then \
	    re='$(MATRIX_SKIP_OTHER_LINES)'; \
	    if [[ " $(MATRIX_SECURE_LINES) " != *" $$v "* ]]; then re="$${re%)}|TestSecure)"; fi; \
	    skip=(-skip "$$re"); \
	  fi; \
	  if MINI_YARN_HADOOP_VERSION=$$v $(MINI_YARN) build && \
	     MINI_YARN_HADOOP_VERSION=$$v $(GO) test -tags integration -count=1 -timeout $(INTEGRATION_TIMEOUT) $(INTEGRATION_FLAGS) "$${skip[@]}" ./integration/...; then \
	    r=ok; else r=FAILED; failed="$$failed $$v"; fi; \
	  summary="$$summary\n  Hadoop $$v: $$r in $$((SECONDS - t0))s"; \
	done; \
	printf "== matrix:$$summary\n"; \
	if [[ -n $$failed ]]; then echo "matrix failed on:$$failed"; exit 1; fi

test: unit matrix container-test-if-able ## all tests: unit tests, the integration suite on every Hadoop line of the matrix, the container test (as root with podman)

# The container test needs a rootful container engine (podman, runc, mmdebstrap: docker/README.md);
# .ci/run installs them, so CI always runs it. Elsewhere, without them, make test says it was not run.
container-test-if-able:
	@if [[ $$(id -u) == 0 ]] && command -v podman >/dev/null && command -v mmdebstrap >/dev/null; then \
	  $(MAKE) --no-print-directory container-test; \
	else \
	  echo "make test: the container test (make container-test) was not run: it needs root, podman, runc and mmdebstrap (docker/README.md)"; \
	fi

# The recordings are committed; `go test ./profile/` compares yarn-er with them (TestFlinkGolden).
flink-golden: ## re-record profile/testdata/flink-golden/ with Flink 1.20.0 and 2.0.0's own classes (Maven)
	docker/flink-golden/record

# The demo runs yarn-er against the bundled mini-YARN, then stops it (also on failure).
demo: build harness flink ## translate, cluster nodes, preflight, a Flink GPU job and a GPU submit against the bundled mini-YARN (good and misconfigured)
	examples/demo.sh

fuzz: ## run every fuzz target for FUZZTIME (default 10s; a count like 2000x works too); fails only on a finding
	FUZZTIME='$(FUZZTIME)' FUZZFLAGS='$(FUZZFLAGS)' FUZZ_RUN='$(FUZZ_RUN)' GO='$(GO)' bench/fuzz.sh

fuzz-smoke: fuzz ## the former name of fuzz

clean: ## remove bin/, dist/, the harness builds (every Hadoop version) and the Flink builds
	rm -rf $(BIN) dist docker/harness/target docker/flink/target docker/flink-golden/target

.PHONY: image container-test container-test-if-able
# The container images (docker/README.md, "Containers"): a Debian base from Debian's packages
# (mmdebstrap) unless IMAGE_FLAGS names --base, the mini-YARN image, the yarn-er image.
# CONTAINER_ENGINE: podman (default when installed) or docker; IMAGE_FLAGS: e.g. --ca-bundle FILE.
CONTAINER_ENGINE ?=
IMAGE_FLAGS ?=
image: ## build the container images with docker/image (base from Debian packages, mini-YARN, yarn-er, Prometheus)
	CONTAINER_ENGINE='$(CONTAINER_ENGINE)' docker/image $(IMAGE_FLAGS)

# Builds the images itself, starts each compose profile, runs yarn-er against it, stops it and
# checks that no container, network or firewall rule is left.
container-test: ## the container test: images, compose (good, misconfigured, serve, multi-host), yarn-er against each, nothing left
	CONTAINER_ENGINE='$(CONTAINER_ENGINE)' YARN_ER_IMAGE_FLAGS='$(IMAGE_FLAGS)' \
	  $(GO) test -tags container -count=1 -timeout 40m -v ./integration/container/

# The same container test under Docker and docker compose v2 (docker/README.md, "Containers"): a
# private dockerd (Debian's docker.io: apt-get install docker.io) that docker/dockerd-private
# starts below a temporary directory and stops afterwards, undoing its firewall chains and its
# bridge; docker compose v2 built from the Go module proxy into .tools/ (cached). The images are
# built with podman and copied from its store (DOCKER_IMAGE_FLAGS=--copy-from podman);
# DOCKER_IMAGE_FLAGS= builds them with Docker's classic builder instead.
COMPOSE_V2_VERSION ?= v2.40.3
COMPOSE_V2 := .tools/docker-compose-$(COMPOSE_V2_VERSION)/docker-compose
DOCKER_IMAGE_FLAGS ?= --copy-from podman
.PHONY: compose-v2 container-test-docker
compose-v2: $(COMPOSE_V2) ## build docker compose v2 ($(COMPOSE_V2_VERSION)) from the Go module proxy into .tools/
$(COMPOSE_V2):
	COMPOSE_V2_VERSION='$(COMPOSE_V2_VERSION)' GO='$(GO)' docker/compose-v2 '$@'

container-test-docker: $(COMPOSE_V2) ## the container test under a private dockerd (docker.io) with docker compose v2
	@dir=$$(mktemp -d "$${TMPDIR:-/tmp}/yarn-er-dockerd.XXXXXX"); rc=0; \
	stop() { docker/dockerd-private stop --dir "$$dir"; }; \
	trap 'stop; exit 130' INT; trap 'stop; exit 143' TERM; \
	eval "$$(docker/dockerd-private start --dir "$$dir" --compose '$(COMPOSE_V2)')" || { stop; exit 1; }; \
	CONTAINER_ENGINE=docker YARN_ER_COMPOSE='docker compose' YARN_ER_IMAGE_FLAGS='$(DOCKER_IMAGE_FLAGS) $(IMAGE_FLAGS)' \
	  $(GO) test -tags container -count=1 -timeout 40m -v ./integration/container/ || rc=$$?; \
	stop || rc=1; \
	if ((rc == 0)); then rm -rf "$$dir"; else echo "make container-test-docker: dockerd's log is $$dir/dockerd.log"; fi; \
	exit $$rc

.PHONY: release release-check
# dist/: static (CGO_ENABLED=0) and NVML (cgo, glibc 2.17+) builds for linux/amd64 and linux/arm64,
# and SHA256SUMS (docs/install.md). The C compiler is zig from PyPI, installed below .tools/.
release: ## build the release binaries into dist/ (static and glibc-2.17 NVML builds, amd64 and arm64) and their SHA256SUMS
	GO='$(GO)' release/build.sh

release-check: release ## make release, then check dist/: checksums, static linking, glibc symbol versions, version and discover runs
	$(GO) vet -tags release ./release/
	$(GO) test -tags release -count=1 -v ./release/
