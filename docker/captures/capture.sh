#!/usr/bin/env bash
# Captures the RM REST answers of a running mini-YARN into docker/captures/<hadoop-version>/.
# usage: docker/captures/capture.sh [STATE_DIR] [OUT_DIR]
#   STATE_DIR defaults to $YARN_ER_MINIYARN_STATE; OUT_DIR to docker/captures/<hadoopVersion>
#   (docker/captures/<hadoopVersion>/misconfigured for a cluster from docker/conf-misconfigured).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
state=${1:-${YARN_ER_MINIYARN_STATE:?give a state dir or set YARN_ER_MINIYARN_STATE}}
# shellcheck source=/dev/null
source "$state/env.sh"
ep=$state/endpoints.json
version=$(sed -n 's/.*"hadoopVersion":"\([^"]*\)".*/\1/p' "$ep")
source_conf=$(sed -n 's/.*"confSource":"\([^"]*\)".*/\1/p' "$ep")
out=${2:-$here/$version}
[[ $source_conf == */conf-misconfigured ]] && out=${2:-$here/$version/misconfigured}
mkdir -p "$out"
u="user.name=${USER:-$(id -un)}"
rm=$YARN_ER_RM

get() { # name path
  curl -sS -H 'Accept: application/json' -o "$out/$1" -w "GET $2 -> %{http_code}\n" "$rm$2"
}
get info.json "/ws/v1/cluster/info?$u"
get nodes.json "/ws/v1/cluster/nodes?$u"
get nodes-running.json "/ws/v1/cluster/nodes?states=RUNNING&$u"
get nodes-decommissioned.json "/ws/v1/cluster/nodes?states=DECOMMISSIONED&$u"
get metrics.json "/ws/v1/cluster/metrics?$u"
get scheduler.json "/ws/v1/cluster/scheduler?$u"
get scheduler-overview.json "/ws/v1/cluster/scheduler-overview?$u"
get apps-empty.json "/ws/v1/cluster/apps?$u"
curl -sS -X POST -H 'Accept: application/json' -o "$out/new-application.json" \
  -w "POST /ws/v1/cluster/apps/new-application?$u -> %{http_code}\n" \
  "$rm/ws/v1/cluster/apps/new-application?$u"
# Without user.name (anonymous requests are refused by docker/conf/core-site.xml).
curl -sS -i -o "$out/info-anonymous.txt" -w "GET /ws/v1/cluster/info (no user) -> %{http_code}\n" \
  "$rm/ws/v1/cluster/info"
