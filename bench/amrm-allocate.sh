#!/usr/bin/env bash
# bench/amrm-allocate.sh: time from a Go ApplicationMaster's start to all containers allocated and
# launched (AM-RM allocate + NodeManager startContainers over Hadoop IPC) for 4, 16 and 64
# containers on the mini-YARN, and the AM's peak RSS. Results go to docs/benchmarks.md by hand,
# with this command, the machine and the date.
#
#   bench/amrm-allocate.sh                 # starts a mini-YARN for the run
#   YARN_ER_MINIYARN_STATE=... bench/amrm-allocate.sh   # reuses a running one
#
# Extra arguments go to go test (e.g. -benchtime 3x for three runs per case).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
exec go test -tags integration -count 1 -run '^$' -bench '^BenchmarkAMRMAllocate$' -benchtime 1x "$@" ./integration/
