#!/usr/bin/env bash
# Captures the ResourceManager REST answers that package yarn decodes, from a running mini-YARN,
# into yarn/testdata/captures/<hadoop-version>/. The unit tests replay them in fake RMs.
#
# usage: yarn/testdata/captures/capture.sh STATE_DIR [REST_DISABLED_STATE_DIR]
#   STATE_DIR                a mini-YARN started from docker/conf:
#                              docker/mini-yarn start --state /tmp/yarn-er-rest-dev
#   REST_DISABLED_STATE_DIR  optional: a mini-YARN whose yarn-site.xml sets
#                            yarn.webapp.enable-rest-app-submissions=false (see README.md)
#
# Every body goes to <name>.json (or .txt); index.txt lists "name status content-type method
# path-and-query" for each, so a fake RM can answer with the real status. The user is always
# "yarner" (user.name=yarner) so captures do not depend on who runs the script.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
state=${1:?give the state dir of a running mini-YARN}
disabled_state=${2:-}
ep=$state/endpoints.json
rm=$(sed -n 's/.*"rmWebAddress":"\([^"]*\)".*/\1/p' "$ep")
version=$(sed -n 's/.*"hadoopVersion":"\([^"]*\)".*/\1/p' "$ep")
out=$here/$version
mkdir -p "$out"
: >"$out/index.txt"
U=user.name=yarner

# req NAME METHOD PATH [BODY-FILE]: one request, body to NAME, a line to index.txt.
req() {
  local name=$1 method=$2 path=$3 body=${4:-} base=${RM_BASE:-$rm}
  local args=(-sS -X "$method" -H 'Accept: application/json' -o "$out/$name" -D "$out/.headers")
  [[ -n $body ]] && args+=(-H 'Content-Type: application/json' --data-binary "@$body")
  curl "${args[@]}" "$base$path"
  local status ctype
  status=$(sed -n '1s/^HTTP\/[0-9.]* \([0-9]*\).*/\1/p' "$out/.headers")
  ctype=$(sed -n 's/^[Cc]ontent-[Tt]ype: *\([^;[:space:]]*\).*/\1/p' "$out/.headers" | tail -n1)
  printf '%s %s %s %s %s\n' "$name" "$status" "${ctype:--}" "$method" "$path" >>"$out/index.txt"
  printf '%-32s %s %s %s\n' "$name" "$status" "$method" "$path" >&2
}

appid() { sed -n 's/.*"application-id":"\([^"]*\)".*/\1/p' "$1"; }

# wait_state ID STATE...: poll /state until one of the states.
wait_state() {
  local id=$1; shift
  for _ in $(seq 1 120); do
    local s
    s=$(curl -sS "$rm/ws/v1/cluster/apps/$id/state?$U" | sed -n 's/.*"state":"\([^"]*\)".*/\1/p')
    for want in "$@"; do [[ $s == "$want" ]] && return 0; done
    sleep 0.5
  done
  echo "timed out waiting for $id to reach $*" >&2
  return 1
}

submission() { # ID NAME COMMAND
  cat <<EOF
{"application-id":"$1","application-name":"$2","queue":"default",
 "am-container-spec":{"environment":{"entry":[{"key":"YARN_ER_CAPTURE","value":"1"}]},
                      "commands":{"command":["$3"]}},
 "unmanaged-AM":false,"max-app-attempts":1,"resource":{"memory":128,"vCores":1},
 "application-type":"YARN-ER-CAPTURE","keep-containers-across-application-attempts":false,
 "application-tags":{"tag":["yarn-er","capture"]}}
EOF
}

# Read endpoints on the idle cluster.
req info.json GET "/ws/v1/cluster/info?$U"
req metrics-idle.json GET "/ws/v1/cluster/metrics?$U"
req nodes.json GET "/ws/v1/cluster/nodes?$U"
req nodes-running.json GET "/ws/v1/cluster/nodes?states=RUNNING&$U"
req nodes-decommissioned.json GET "/ws/v1/cluster/nodes?states=DECOMMISSIONED&$U"
node=$(grep -o '"id":"[^"]*"' "$out/nodes.json" | head -n1 | cut -d'"' -f4)
req node.json GET "/ws/v1/cluster/nodes/$node?$U"
req scheduler.json GET "/ws/v1/cluster/scheduler?$U"
req scheduler-overview.json GET "/ws/v1/cluster/scheduler-overview?$U"
req apps-empty.json GET "/ws/v1/cluster/apps?$U"
req conf.json GET "/conf?format=json&$U"
req conf-name.json GET "/conf?format=json&name=yarn.resource-types&$U"

# Errors.
req error-404-app.json GET "/ws/v1/cluster/apps/application_1_0001?$U"
req error-404-node.json GET "/ws/v1/cluster/nodes/nope:1?$U"
req error-400-appid.json GET "/ws/v1/cluster/apps/bogus?$U"
req error-401-anonymous.txt GET "/ws/v1/cluster/info"
req error-404-conf-name.txt GET "/conf?format=json&name=no.such.property&$U"

# A trivial AM (/bin/true): it exits 0 without registering with the RM.
req new-application.json POST "/ws/v1/cluster/apps/new-application?$U"
id1=$(appid "$out/new-application.json")
submission "$id1" yarn-er-true /bin/true >"$out/.sub1"
req submit-true.txt POST "/ws/v1/cluster/apps?$U" "$out/.sub1"
wait_state "$id1" FINISHED FAILED KILLED
req app-true-finished.json GET "/ws/v1/cluster/apps/$id1?$U"
req appattempts-true.json GET "/ws/v1/cluster/apps/$id1/appattempts?$U"
req app-true-state.json GET "/ws/v1/cluster/apps/$id1/state?$U"
# Submitting the same id again (YARN treats it as a retry of the first submission).
req submit-duplicate.txt POST "/ws/v1/cluster/apps?$U" "$out/.sub1"

# A long AM (sleep 600), listed while it waits, then killed.
req new-application-2.json POST "/ws/v1/cluster/apps/new-application?$U"
id2=$(appid "$out/new-application-2.json")
submission "$id2" yarn-er-sleep "sleep 600" >"$out/.sub2"
req submit-sleep.txt POST "/ws/v1/cluster/apps?$U" "$out/.sub2"
wait_state "$id2" ACCEPTED RUNNING
req apps.json GET "/ws/v1/cluster/apps?$U"
req apps-one.json GET "/ws/v1/cluster/apps?states=ACCEPTED,RUNNING&$U"
req app-sleep.json GET "/ws/v1/cluster/apps/$id2?$U"
req metrics-busy.json GET "/ws/v1/cluster/metrics?$U"
req nodes-busy.json GET "/ws/v1/cluster/nodes?$U"
printf '{"state":"KILLED"}' >"$out/.kill"
req kill-accepted.json PUT "/ws/v1/cluster/apps/$id2/state?$U" "$out/.kill"
wait_state "$id2" KILLED
req kill-done.json PUT "/ws/v1/cluster/apps/$id2/state?$U" "$out/.kill"
req app-killed.json GET "/ws/v1/cluster/apps/$id2?$U"
# Killing an application that has already ended.
req kill-finished.json PUT "/ws/v1/cluster/apps/$id1/state?$U" "$out/.kill"

# Too much memory for the AM.
req new-application-3.json POST "/ws/v1/cluster/apps/new-application?$U"
id3=$(appid "$out/new-application-3.json")
submission "$id3" yarn-er-huge /bin/true | sed 's/"memory":128/"memory":1048576/' >"$out/.sub3"
req error-submit-too-much-memory.json POST "/ws/v1/cluster/apps?$U" "$out/.sub3"

# A mini-YARN with REST submission off.
if [[ -n $disabled_state ]]; then
  RM_BASE=$(sed -n 's/.*"rmWebAddress":"\([^"]*\)".*/\1/p' "$disabled_state/endpoints.json")
  RM_BASE=$RM_BASE req error-403-new-application-disabled.json POST "/ws/v1/cluster/apps/new-application?$U"
  RM_BASE=$RM_BASE req error-403-submit-disabled.json POST "/ws/v1/cluster/apps?$U" "$out/.sub1"
fi
rm -f "$out/.headers" "$out/.sub1" "$out/.sub2" "$out/.sub3" "$out/.kill"
