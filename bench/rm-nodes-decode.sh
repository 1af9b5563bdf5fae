#!/usr/bin/env bash
# bench/rm-nodes-decode.sh: decoding a synthesised 10,000-node /ws/v1/cluster/nodes answer with
# package yarn: go test benchmarks (time, bytes and allocations per decode) and bench/rmnodes
# under /usr/bin/time -v (wall time and peak heap per fetch, the process's peak RSS). Results go
# to docs/benchmarks.md ("## RM REST client") by hand, with this command, the machine and the date.
#
#   bench/rm-nodes-decode.sh [NODES]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
nodes=${1:-10000}
go test -mod=mod ./yarn/ -run '^$' -bench 'Nodes10k' -benchmem -benchtime 5x -count 3
go build -mod=mod -o /tmp/yarn-er-rmnodes ./bench/rmnodes
/usr/bin/time -v /tmp/yarn-er-rmnodes -nodes "$nodes" -runs 3 2>&1 |
  grep -E '^(nodes=|run |\s+(Maximum resident set size|Elapsed \(wall clock\) time|User time|System time))'
rm -f /tmp/yarn-er-rmnodes
