#!/usr/bin/env bash
# Latency of one `yarn-er discover 1` (p50/p99), alone and with 64 processes asking at once, with and
# without coordination. Each call is a new process of the built binary against 8 fake GPUs (procfs),
# as Flink's GPUDriver runs its discovery script. Results go to docs/benchmarks.md, "## discovery".
#
#   bench/discover-latency.sh            # 300 calls per case
#   CALLS=1000 bench/discover-latency.sh
set -euo pipefail
cd "$(dirname "$0")/.."
CALLS="${CALLS:-300}"
export CGO_CFLAGS="${CGO_CFLAGS:--Wno-deprecated-declarations}"
echo "# $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, $(uname -sr), load: $(cut -d' ' -f1-3 /proc/loadavg)"
go test -mod=mod -run '^$' -bench '^BenchmarkDiscoverLatency$' -benchtime "${CALLS}x" -count 1 ./cmd/yarn-er/
