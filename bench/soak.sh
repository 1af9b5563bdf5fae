#!/usr/bin/env bash
# bench/soak.sh: a long GPU job under random faults on the HA mini-YARN (issue 32's soak), yarn-er's
# ApplicationMaster against DistributedShell's, same cluster, same seed (integration/soak_test.go,
# BenchmarkSoak). Not part of CI: it runs $DURATION per tool (default 10m). Results go to
# docs/benchmarks.md by hand, with this command, the machine, its load and the date.
#
#   bench/soak.sh                                     # 10 minutes, 20 faults, seed 1, both tools
#   DURATION=3m FAULTS=6 SEED=7 bench/soak.sh         # shorter
#   YARN_ER_MINIYARN_HA_STATE=... bench/soak.sh       # reuse a running `docker/mini-yarn start --ha`
#   NO_DISTSHELL=1 bench/soak.sh                      # yarn-er only
#
# DistributedShell's jars come as in bench/distshell.sh (Maven, cached outside the repository).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
export YARN_ER_SOAK_DURATION=${DURATION:-10m} YARN_ER_SOAK_FAULTS=${FAULTS:-20} YARN_ER_SOAK_SEED=${SEED:-1}
[[ -n ${OUT:-} ]] && export YARN_ER_BENCH_OUT=$OUT
if [[ -z ${NO_DISTSHELL:-} ]]; then
  # Reuse bench/distshell.sh's Maven fetch: it prints nothing but the classpath dir when asked.
  DS_VERSION=${DISTSHELL_VERSION:-3.4.2}
  HADOOP_CLIENT_VERSION=${DISTSHELL_HADOOP_VERSION:-3.5.0}
  CACHE=${DISTSHELL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/yarn-er/distshell}
  LIB=$CACHE/ds-$DS_VERSION-hadoop-$HADOOP_CLIENT_VERSION
  if [[ ! -f $LIB/.complete ]]; then
    echo "soak.sh: DistributedShell's jars are fetched by bench/distshell.sh; run it once (RUNS=1 NS=4 bench/distshell.sh) or set NO_DISTSHELL=1" >&2
    exit 2
  fi
  export YARN_ER_DISTSHELL_LIB=$LIB
fi
echo "soak.sh: $(date -u '+%Y-%m-%d %H:%M UTC'), load average $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) cores" >&2
exec go test -tags integration -count 1 -run '^$' -bench '^BenchmarkSoak$' -benchtime 1x -timeout 3h "$@" ./integration/
