#!/usr/bin/env bash
# bench/submit.sh: wall time of `yarn-er submit --containers N --gpus 1 --memory 128m -- true`
# from start to the application's end (preflight, new-application, staging, submission, AM start,
# allocation, launch, unregistration), and the staging time submit reports, for N = 4, 16 and 64
# on the mini-YARN. Results go to docs/benchmarks.md by hand, with this command, the machine and
# the date.
#
#   bench/submit.sh                                   # starts a mini-YARN for the run
#   YARN_ER_MINIYARN_STATE=... bench/submit.sh -benchtime 3x   # reuses a running one
#
# Extra arguments go to go test.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
exec go test -tags integration -count 1 -run '^$' -bench '^BenchmarkSubmit$' -benchtime 1x "$@" ./integration/
