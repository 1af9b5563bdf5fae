#!/usr/bin/env bash
# Measures the mini-YARN (docker/mini-yarn): harness build time, start-up time to ready, the
# resident memory of its JVM, and stop time. Prints a Markdown table for docs/benchmarks.md.
#
# usage: bench/miniyarn-startup.sh [RUNS]      (default 3 starts; each start is a fresh cluster)
# It rebuilds the harness (--force) to time the build: into a new target/build-<digest>/, so
# clusters running from this checkout are not disturbed.
#   BENCH_COLD_BUILD=1 also times a harness build from an empty Maven repository (downloads
#   ~150 MB from Maven Central).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
runs=${1:-3}
script=docker/mini-yarn
work=$(mktemp -d "${TMPDIR:-/tmp}/yarn-er-bench.XXXXXX")
trap '"$script" stop --state "$work/state" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT

ms() { date +%s%3N; }
# CPU seconds (user + system) a process has used: less sensitive to a busy machine than wall time.
cpu_s() { awk -v hz="$(getconf CLK_TCK)" '{sub(/.*\) /, ""); printf "%.1f", ($12 + $13) / hz}' "/proc/$1/stat"; }

echo "# $(date -u +%Y-%m-%dT%H:%MZ) on $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo) RAM, $(java -version 2>&1 | sed -n 1p)"
echo "# load average before: $(cut -d' ' -f1-3 /proc/loadavg)"

if [[ ${BENCH_COLD_BUILD:-} == 1 ]]; then
  t0=$(ms)
  MAVEN_OPTS="${MAVEN_OPTS:-} -Dmaven.repo.local=$work/m2" "$script" build --force >/dev/null 2>&1
  echo "| harness build, empty Maven repository (downloads) | $(( $(ms) - t0 )) ms |"
fi
t0=$(ms)
"$script" build --force >/dev/null 2>&1
echo "| harness build, Maven repository warm | $(( $(ms) - t0 )) ms |"
t0=$(ms)
"$script" build >/dev/null 2>&1
echo "| harness build, up to date (digest check only) | $(( $(ms) - t0 )) ms |"

echo
echo "| run | start to ready (script) | ready inside JVM (HDFS + YARN) | JVM CPU to ready | JVM RSS at ready | JVM RSS after 1 app | threads | stop |"
echo "|---|---|---|---|---|---|---|---|"
for i in $(seq 1 "$runs"); do
  t0=$(ms)
  "$script" start --state "$work/state" >/dev/null 2>&1
  start_ms=$(( $(ms) - t0 ))
  pid=$(cat "$work/state/mini-yarn.pid")
  rss_ready=$(ps -o rss= -p "$pid" | tr -d ' ')
  cpu_ready=$(cpu_s "$pid")
  threads=$(ps -o nlwp= -p "$pid" | tr -d ' ')
  # One short application through REST, so that the RSS includes a launched container's cost.
  # shellcheck source=/dev/null
  source "$work/state/env.sh"
  u="user.name=$(id -un)"
  app=$(curl -s -X POST "$YARN_ER_RM/ws/v1/cluster/apps/new-application?$u" | sed -n 's/.*"application-id":"\([^"]*\)".*/\1/p')
  curl -s -o /dev/null -X POST -H 'Content-Type: application/json' "$YARN_ER_RM/ws/v1/cluster/apps?$u" --data \
    "{\"application-id\":\"$app\",\"application-name\":\"bench\",\"max-app-attempts\":1,\"resource\":{\"memory\":128,\"vCores\":1},\"am-container-spec\":{\"commands\":{\"command\":\"true\"}}}"
  for _ in $(seq 1 120); do
    state=$(curl -s "$YARN_ER_RM/ws/v1/cluster/apps/$app?$u" | sed -n 's/.*"state":"\([A-Z]*\)".*/\1/p')
    [[ $state == FAILED || $state == FINISHED || $state == KILLED ]] && break
    sleep 0.5
  done
  rss_app=$(ps -o rss= -p "$pid" | tr -d ' ')
  t0=$(ms)
  "$script" stop --state "$work/state" >/dev/null 2>&1
  stop_ms=$(( $(ms) - t0 ))
  echo "| $i | $start_ms ms | $(sed -n 's/.*READY in \([0-9]*\) ms (HDFS \([0-9]*\) ms, YARN \([0-9]*\) ms).*/\1 ms (\2 + \3)/p' "$work/state/cluster.log") | $cpu_ready s | $((rss_ready / 1024)) MiB | $((rss_app / 1024)) MiB | $threads | $stop_ms ms |"
done
echo
echo "# load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
