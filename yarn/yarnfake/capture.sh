#!/usr/bin/env bash
# Records the ResourceManager REST answers that package yarn decodes from real mini-YARNs
# (docker/mini-yarn) into yarn/yarnfake/captures/hadoop-<version>/, the embedded captures that
# package yarnfake replays. The one capture script of the project.
#
# usage: yarn/yarnfake/capture.sh [VERSION...]     (default: the mini-YARN's default line)
#   e.g. yarn/yarnfake/capture.sh 3.2.2 3.3.6 3.4.2 3.5.0
#
# For each version it starts three clusters side by side and stops them again:
#   good          docker/conf                   -> hadoop-<v>/ (reads, errors, a submitted,
#                                                  listed and killed application)
#   misconfigured docker/conf-misconfigured     -> hadoop-<v>/misconfigured/ (reads only)
#   rest-disabled docker/conf with yarn.webapp.enable-rest-app-submissions=false
#                                               -> the two error-403-*-disabled.json of hadoop-<v>/
# Every body goes to <name>.json (or .txt); index.txt lists "name status content-type method
# path-and-query" for each, so that a fake RM answers with the real status. The user is always
# "yarner" (user.name=yarner) so that captures do not depend on who runs the script.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
mini=$root/docker/mini-yarn
U=user.name=yarner
work=$(mktemp -d "${TMPDIR:-/tmp}/yarn-er-capture.XXXXXX")
states=()
cleanup() {
  local s
  for s in "${states[@]}"; do "$mini" stop --state "$s" >/dev/null 2>&1 || true; done
  rm -rf "$work"
}
trap cleanup EXIT

rm_of() { sed -n 's/.*"rmWebAddress":"\([^"]*\)".*/\1/p' "$1/endpoints.json"; }

# req NAME METHOD PATH [BODY-FILE]: one request to $RM, body to $out/NAME, a line to index.txt.
req() {
  local name=$1 method=$2 path=$3 body=${4:-}
  local args=(-sS -X "$method" -H 'Accept: application/json' -o "$out/$name" -D "$work/headers")
  [[ -n $body ]] && args+=(-H 'Content-Type: application/json' --data-binary "@$body")
  curl "${args[@]}" "$RM$path"
  local status ctype
  status=$(sed -n '1s/^HTTP\/[0-9.]* \([0-9]*\).*/\1/p' "$work/headers")
  ctype=$(sed -n 's/^[Cc]ontent-[Tt]ype: *\([^;[:space:]]*\).*/\1/p' "$work/headers" | tail -n1)
  printf '%s %s %s %s %s\n' "$name" "$status" "${ctype:--}" "$method" "$path" >>"$out/index.txt"
  printf '  %-40s %s %s %s\n' "$name" "$status" "$method" "$path" >&2
}

appid() { sed -n 's/.*"application-id":"\([^"]*\)".*/\1/p' "$1"; }

# wait_state ID STATE...: poll /state until one of the states.
wait_state() {
  local id=$1 s want
  shift
  for _ in $(seq 1 240); do
    s=$(curl -sS -H 'Accept: application/json' "$RM/ws/v1/cluster/apps/$id/state?$U" | sed -n 's/.*"state":"\([^"]*\)".*/\1/p')
    for want in "$@"; do [[ $s == "$want" ]] && return 0; done
    sleep 0.5
  done
  echo "capture: timed out waiting for $id to reach $*" >&2
  return 1
}

submission() { # ID NAME COMMAND
  cat <<JSON
{"application-id":"$1","application-name":"$2","queue":"default",
 "am-container-spec":{"environment":{"entry":[{"key":"YARN_ER_CAPTURE","value":"1"}]},
                      "commands":{"command":["$3"]}},
 "unmanaged-AM":false,"max-app-attempts":1,"resource":{"memory":128,"vCores":1},
 "application-type":"YARN-ER-CAPTURE","keep-containers-across-application-attempts":false,
 "application-tags":{"tag":["yarn-er","capture"]}}
JSON
}

# The read endpoints, on an idle cluster.
reads() {
  req info.json GET "/ws/v1/cluster/info?$U"
  req metrics-idle.json GET "/ws/v1/cluster/metrics?$U"
  req nodes.json GET "/ws/v1/cluster/nodes?$U"
  req nodes-running.json GET "/ws/v1/cluster/nodes?states=RUNNING&$U"
  req nodes-decommissioned.json GET "/ws/v1/cluster/nodes?states=DECOMMISSIONED&$U"
  local node
  node=$(grep -o '"id":"[^"]*"' "$out/nodes.json" | head -n1 | cut -d'"' -f4)
  req node.json GET "/ws/v1/cluster/nodes/$node?$U"
  req scheduler.json GET "/ws/v1/cluster/scheduler?$U"
  req scheduler-overview.json GET "/ws/v1/cluster/scheduler-overview?$U"
  req apps-empty.json GET "/ws/v1/cluster/apps?$U"
}

good() {
  reads
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
  local id1 id2 id3
  id1=$(appid "$out/new-application.json")
  submission "$id1" yarn-er-true /bin/true >"$work/sub1"
  req submit-true.txt POST "/ws/v1/cluster/apps?$U" "$work/sub1"
  wait_state "$id1" FINISHED FAILED KILLED
  req app-true-finished.json GET "/ws/v1/cluster/apps/$id1?$U"
  req appattempts-true.json GET "/ws/v1/cluster/apps/$id1/appattempts?$U"
  req app-true-state.json GET "/ws/v1/cluster/apps/$id1/state?$U"
  # Submitting the same id again (YARN treats it as a retry of the first submission).
  req submit-duplicate.txt POST "/ws/v1/cluster/apps?$U" "$work/sub1"

  # A long AM (sleep 600), listed while it waits, then killed.
  req new-application-2.json POST "/ws/v1/cluster/apps/new-application?$U"
  id2=$(appid "$out/new-application-2.json")
  submission "$id2" yarn-er-sleep "sleep 600" >"$work/sub2"
  req submit-sleep.txt POST "/ws/v1/cluster/apps?$U" "$work/sub2"
  wait_state "$id2" ACCEPTED RUNNING
  req apps.json GET "/ws/v1/cluster/apps?$U"
  req apps-one.json GET "/ws/v1/cluster/apps?states=ACCEPTED,RUNNING&$U"
  req app-sleep.json GET "/ws/v1/cluster/apps/$id2?$U"
  req metrics-busy.json GET "/ws/v1/cluster/metrics?$U"
  req nodes-busy.json GET "/ws/v1/cluster/nodes?$U"
  printf '{"state":"KILLED"}' >"$work/kill"
  req kill-accepted.json PUT "/ws/v1/cluster/apps/$id2/state?$U" "$work/kill"
  wait_state "$id2" KILLED
  req kill-done.json PUT "/ws/v1/cluster/apps/$id2/state?$U" "$work/kill"
  req app-killed.json GET "/ws/v1/cluster/apps/$id2?$U"
  # Killing an application that has already ended.
  req kill-finished.json PUT "/ws/v1/cluster/apps/$id1/state?$U" "$work/kill"

  # Too much memory for the AM.
  req new-application-3.json POST "/ws/v1/cluster/apps/new-application?$U"
  id3=$(appid "$out/new-application-3.json")
  submission "$id3" yarn-er-huge /bin/true | sed 's/"memory":128/"memory":1048576/' >"$work/sub3"
  req error-submit-too-much-memory.json POST "/ws/v1/cluster/apps?$U" "$work/sub3"
}

capture_version() {
  local v=$1 conf_disabled=$work/conf-disabled-$v base
  base=$here/captures/hadoop-$v
  rm -rf "$conf_disabled" && cp -r "$root/docker/conf" "$conf_disabled"
  sed -i 's|</configuration>|  <property><name>yarn.webapp.enable-rest-app-submissions</name><value>false</value></property>\n</configuration>|' \
    "$conf_disabled/yarn-site.xml"
  MINI_YARN_HADOOP_VERSION=$v "$mini" build
  local g=$work/$v-good m=$work/$v-misconfigured d=$work/$v-disabled pids=()
  states+=("$g" "$m" "$d")
  MINI_YARN_HADOOP_VERSION=$v "$mini" start --state "$g" --conf "$root/docker/conf" & pids+=($!)
  MINI_YARN_HADOOP_VERSION=$v "$mini" start --state "$m" --conf "$root/docker/conf-misconfigured" & pids+=($!)
  MINI_YARN_HADOOP_VERSION=$v "$mini" start --state "$d" --conf "$conf_disabled" & pids+=($!)
  local p
  for p in "${pids[@]}"; do wait "$p"; done
  local got
  got=$(sed -n 's/.*"hadoopVersion":"\([^"]*\)".*/\1/p' "$g/endpoints.json")
  [[ $got == "$v" ]] || { echo "capture: asked for Hadoop $v, the cluster runs $got" >&2; exit 1; }

  rm -rf "$base" && mkdir -p "$base/misconfigured"
  echo "== hadoop-$v" >&2
  out=$base RM=$(rm_of "$g")
  good
  RM=$(rm_of "$d")
  req error-403-new-application-disabled.json POST "/ws/v1/cluster/apps/new-application?$U"
  req error-403-submit-disabled.json POST "/ws/v1/cluster/apps?$U" "$work/sub1"
  echo "== hadoop-$v/misconfigured" >&2
  out=$base/misconfigured RM=$(rm_of "$m")
  reads
  req new-application.json POST "/ws/v1/cluster/apps/new-application?$U"
  for s in "$g" "$m" "$d"; do "$mini" stop --state "$s" >/dev/null 2>&1 || true; done
}

versions=("$@")
[[ ${#versions[@]} -gt 0 ]] || versions=("$(sed -n 's:^ *<hadoop.version>\(.*\)</hadoop.version>.*:\1:p' "$root/docker/harness/pom.xml" | head -n1)")
for v in "${versions[@]}"; do capture_version "$v"; done
