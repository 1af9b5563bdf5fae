#!/usr/bin/env bash
# The quick-start demo (`make demo`): yarn-er against the bundled mini-YARN (real Hadoop RM,
# NodeManagers and HDFS, started from docker/). It shows
#   1. the YARN container Flink will ask for (translate),
#   2. the cluster's GPUs and FPGAs (cluster nodes),
#   3. a preflight that passes on a well-configured cluster, with yarn-er as Flink's discovery script,
#      then a real Flink job (1.20.0, from docker/flink) whose 2 TaskManagers get 2 GPUs each,
#   4. a GPU program run on YARN: 8 containers with one yarn.io/gpu each (submit, app list),
#   5. a preflight that fails on a misconfigured cluster, naming the files and lines to fix.
# Both clusters are stopped on exit, also on failure or Ctrl-C.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=$PWD
bin=$root/bin/yarn-er
mini=$root/docker/mini-yarn
[[ -x $bin ]] || { echo "demo: $bin missing; run 'make build' first" >&2; exit 1; }

work=$(mktemp -d "${TMPDIR:-/tmp}/yarn-er-demo.XXXXXX")
cleanup() {
  "$mini" stop --state "$work/good" >/dev/null 2>&1 || true
  "$mini" stop --state "$work/misconfigured" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

if [[ -t 1 && -z ${NO_COLOR:-} ]]; then bold=$'\033[1m' plain=$'\033[0m'; else bold='' plain=''; fi
step() { printf '\n%s== %s%s\n' "$bold" "$*" "$plain"; }
run() { printf '$ %s\n' "$*"; "$@"; }

step "Starting the bundled mini-YARN (docker/conf: yarn.io/gpu and yarn.io/fpga, DominantResourceCalculator)"
"$mini" start --state "$work/good" --watch-pid $$
eval "$("$mini" env --state "$work/good")"
echo "HADOOP_CONF_DIR=$HADOOP_CONF_DIR  YARN_ER_RM=$YARN_ER_RM"

step "1. The TaskManager container Flink's ApplicationMaster will ask YARN for"
run "$bin" translate --flink-conf examples/flink-conf.yaml

step "2. The cluster's GPUs and FPGAs, node by node"
run "$bin" cluster nodes

step "3. Preflight against the well-configured cluster"
# A Flink installation whose GPU discovery script is yarn-er itself (argv[0] dispatch).
flink_home=$work/flink
mkdir -p "$flink_home/plugins/external-resource-gpu"
ln -s "$bin" "$flink_home/plugins/external-resource-gpu/nvidia-gpu-discovery.sh"
# Flink's GPU driver itself (Maven Central; its pom's parent is not served, hence transitive=false).
gpu_jar=$HOME/.m2/repository/org/apache/flink/flink-external-resource-gpu/1.20.0/flink-external-resource-gpu-1.20.0.jar
[[ -f $gpu_jar ]] || "${MVN:-mvn}" -B -q dependency:get -Dartifact=org.apache.flink:flink-external-resource-gpu:1.20.0 -Dtransitive=false
cp "$gpu_jar" "$flink_home/plugins/external-resource-gpu/"
echo "FLINK_HOME=$flink_home (plugins/external-resource-gpu/: Flink's GPU plugin jar, nvidia-gpu-discovery.sh -> yarn-er)"
FLINK_HOME=$flink_home run "$bin" preflight --flink-conf examples/flink-conf.yaml --containers 4

step "3b. A Flink job on the cluster: which GPUs each TaskManager got (yarn-er as the discovery script, coordination on)"
# docker/flink/gpu-report: the same steps as docs/flink-on-yarn-gpus.md, on a fake host of 8 GPUs that
# both NodeManagers share; it preflights the job's own configuration first.
"$root/docker/flink/gpu-report" --work "$work/flink-job" --yarn-er "$bin"

step "4. A GPU program on YARN: 8 containers with one yarn.io/gpu each"
# The mini-YARN's NodeManagers schedule yarn.io/gpu but the host has no GPU: each NodeManager has
# a fake NVIDIA host of its own (procfs information files and /dev nodes for its 4 GPUs, UUIDs
# GPU-<node>-...) that it hands its containers, as a real node hands them its GPUs, so no --env
# is needed: each container's 'yarn-er exec' locks one device of its node and sets
# CUDA_VISIBLE_DEVICES. Each rank holds its GPU for 5 s, so the ranks that run at the same time on
# one node show different GPUs (a GPU is free again once its rank ended).
run "$bin" submit --containers 8 --gpus 1 --memory 128m --progress plain --env OUT="$work/ranks.txt" \
  -- sh -c 'echo "rank $YARN_ER_RANK of $YARN_ER_WORLD_SIZE on localhost:$NM_PORT sees GPU $CUDA_VISIBLE_DEVICES" >> "$OUT"; sleep 5'
echo "What the ranks wrote:"
sort "$work/ranks.txt"
run "$bin" app list --all --type YARN-ER

step "5. Preflight against a misconfigured cluster (docker/conf-misconfigured: DefaultResourceCalculator, no GPU/FPGA types)"
"$mini" start --conf docker/conf-misconfigured --state "$work/misconfigured" --watch-pid $$
eval "$("$mini" env --state "$work/misconfigured")"
status=0
FLINK_HOME=$flink_home run "$bin" preflight --flink-conf examples/flink-conf.yaml || status=$?
echo "(exit status $status: 3 means the preflight found problems, as it should here)"
[[ $status == 3 ]]

step "Done: stopping both clusters"
