#!/usr/bin/env bash
# bench/am-job.sh: yarn-er's ApplicationMaster (`yarn-er am`) on the mini-YARN for 4, 16 and 64
# ranks of 1 yarn.io/gpu each running `true` under `yarn-er exec`: submit to FINISHED, AM start to
# registration and to every rank having a container, AM peak RSS. Results go to
# docs/benchmarks.md by hand, with this command, the machine and the date.
#
#   bench/am-job.sh                                  # starts a mini-YARN for the run
#   YARN_ER_MINIYARN_STATE=... bench/am-job.sh       # reuses a running one
#
# Extra arguments go to go test (e.g. -benchtime 3x for three runs per case).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
exec go test -tags integration -count 1 -run '^$' -bench '^BenchmarkAMJob$' -benchtime 1x "$@" ./integration/
