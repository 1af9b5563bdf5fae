#!/usr/bin/env bash
# bench/distshell.sh: Hadoop's DistributedShell against `yarn-er submit` on one mini-YARN, same
# cluster, same run, interleaved: `-num_containers N -container_resources
# memory-mb=128,vcores=1,yarn.io/gpu=1 -shell_command true` against `yarn-er submit --containers N
# --gpus 1 --memory 128m -- true` for N = 4, 16, 64, several runs each. Per run: client start to
# FINISHED, the AM's peak RSS (VmHWM from /proc), and where the time goes (from the
# ResourceManager's state changes). Results go to docs/benchmarks.md by hand, with this command,
# the machine, its load and the date.
#
#   bench/distshell.sh                                  # starts a mini-YARN for the run, stops it after
#   YARN_ER_MINIYARN_STATE=... bench/distshell.sh       # reuses a running one
#   RUNS=5 NS=4,16 OUT=/tmp/ds.md bench/distshell.sh    # repetitions, container counts, table file
#
# DistributedShell (org.apache.hadoop:hadoop-yarn-applications-distributedshell, served at 3.4.2,
# not at 3.5.0) runs on the Hadoop 3.5.0 client libraries with com.sun.jersey:jersey-client:1.19.4
# added; Maven fetches all of them once into $DISTSHELL_CACHE (default
# ~/.cache/yarn-er/distshell), never into the repository. Extra arguments go to go test.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

DS_VERSION=${DISTSHELL_VERSION:-3.4.2}
HADOOP_CLIENT_VERSION=${DISTSHELL_HADOOP_VERSION:-3.5.0}
CACHE=${DISTSHELL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/yarn-er/distshell}
LIB=$CACHE/ds-$DS_VERSION-hadoop-$HADOOP_CLIENT_VERSION
MVN=${MVN:-mvn}

if [[ ! -f $LIB/.complete ]]; then
  mkdir -p "$LIB"
  cat >"$CACHE/pom-$DS_VERSION-$HADOOP_CLIENT_VERSION.xml" <<POM
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>dev.yarner.bench</groupId>
  <artifactId>distshell-classpath</artifactId>
  <version>1</version>
  <packaging>pom</packaging>
  <dependencies>
    <dependency>
      <groupId>org.apache.hadoop</groupId>
      <artifactId>hadoop-yarn-applications-distributedshell</artifactId>
      <version>$DS_VERSION</version>
      <exclusions><exclusion><groupId>*</groupId><artifactId>*</artifactId></exclusion></exclusions>
    </dependency>
    <dependency>
      <groupId>org.apache.hadoop</groupId>
      <artifactId>hadoop-client</artifactId>
      <version>$HADOOP_CLIENT_VERSION</version>
    </dependency>
    <dependency>
      <groupId>com.sun.jersey</groupId>
      <artifactId>jersey-client</artifactId>
      <version>1.19.4</version>
    </dependency>
  </dependencies>
</project>
POM
  echo "distshell.sh: fetching DistributedShell $DS_VERSION and the Hadoop $HADOOP_CLIENT_VERSION client libraries into $LIB (Maven)" >&2
  "$MVN" -q -B -f "$CACHE/pom-$DS_VERSION-$HADOOP_CLIENT_VERSION.xml" \
    org.apache.maven.plugins:maven-dependency-plugin:3.6.1:copy-dependencies \
    -DoutputDirectory="$LIB" -DincludeScope=runtime
  touch "$LIB/.complete"
fi

export YARN_ER_DISTSHELL_LIB=$LIB
export YARN_ER_DISTSHELL_RUNS=${RUNS:-3}
export YARN_ER_DISTSHELL_N=${NS:-4,16,64}
[[ -n ${OUT:-} ]] && export YARN_ER_BENCH_OUT=$OUT
echo "distshell.sh: $(date -u '+%Y-%m-%d %H:%M UTC'), load average $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) cores" >&2
exec go test -tags integration -count 1 -run '^$' -bench '^BenchmarkDistShell$' -benchtime 1x -timeout 3h "$@" ./integration/
