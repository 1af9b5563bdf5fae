#!/usr/bin/env bash
# Measures the HA mini-YARN (docker/mini-yarn start --ha): start-up to ready (wall and the JVM's CPU)
# and what each failover reports (the new ResourceManager active, the former one standby, every
# NodeManager RUNNING on the new one). Prints Markdown tables for docs/benchmarks.md.
#
# usage: bench/miniyarn-ha.sh [RUNS] [FAILOVERS]   (default 3 fresh clusters, 3 failovers each)
#   BENCH_MINI_YARN: the docker/mini-yarn script to measure (default this checkout's), e.g. an
#   older checkout's for a before/after comparison.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
runs=${1:-3}
failovers=${2:-3}
script=${BENCH_MINI_YARN:-docker/mini-yarn}
work=$(mktemp -d "${TMPDIR:-/tmp}/yarn-er-bench-ha.XXXXXX")
trap '"$script" stop --state "$work/state" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT

ms() { date +%s%3N; }
# CPU seconds (user + system) a process has used: less sensitive to a busy machine than wall time.
cpu_s() { awk -v hz="$(getconf CLK_TCK)" '{sub(/.*\) /, ""); printf "%.1f", ($12 + $13) / hz}' "/proc/$1/stat"; }

echo "# $(date -u +%Y-%m-%dT%H:%MZ) on $(nproc) cores, $(java -version 2>&1 | sed -n 1p), script $script"
echo "# load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
"$script" build >/dev/null 2>&1

starts="| run | start to ready (script) | ready inside JVM (HDFS + YARN) | JVM CPU to ready |
|---|---|---|---|"
fails="| run | failover | from → to | new RM active | former RM standby | every NodeManager RUNNING |
|---|---|---|---|---|---|"
for i in $(seq 1 "$runs"); do
  t0=$(ms)
  "$script" start --state "$work/state" --ha >/dev/null 2>&1
  start_ms=$(( $(ms) - t0 ))
  pid=$(cat "$work/state/mini-yarn.pid")
  ready=$(sed -n 's/.*READY in \([0-9]*\) ms (HDFS \([0-9]*\) ms, YARN \([0-9]*\) ms).*/\1 ms (\2 + \3)/p' "$work/state/cluster.log")
  starts+=$'\n'"| $i | $start_ms ms | $ready | $(cpu_s "$pid") s |"
  for f in $(seq 1 "$failovers"); do
    msg=$("$script" failover --state "$work/state" 2>&1) || { echo "failover failed: $msg" >&2; exit 1; }
    pair=$(sed -n 's/.*failed over from \([a-z0-9]*\) to \([a-z0-9]*\).*/\1 → \2/p' <<<"$msg")
    active=$(sed -n 's/.*active after \([0-9]*\) ms.*/\1 ms/p' <<<"$msg")
    standby=$(sed -n 's/.*standby after \([0-9]*\) ms.*/\1 ms/p' <<<"$msg")
    whole=$(grep -o 'after [0-9]* ms' <<<"$msg" | tail -n 1 | tr -dc '0-9')
    fails+=$'\n'"| $i | $f | $pair | ${active:-–} | ${standby:-–} | $whole ms |"
  done
  "$script" stop --state "$work/state" >/dev/null 2>&1
done
echo
echo "$starts"
echo
echo "$fails"
echo
echo "# load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
