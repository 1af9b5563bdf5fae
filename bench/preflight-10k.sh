#!/usr/bin/env bash
# Measures `yarn-er preflight` (offline and live checks) against a fake ResourceManager with 10,000
# RUNNING NodeManagers (16384 MB, 32 vcores, 4 yarn.io/gpu, 2 yarn.io/fpga each; every fourth one
# half busy), answering /info, /nodes, /scheduler and /conf in Hadoop 3.5's JSON shapes. Reports
# the wall time and the peak resident memory (max RSS) of the yarn-er process, then runs the Go
# benchmark of the same preflight in-process. Prints Markdown for docs/benchmarks.md.
#
# usage: bench/preflight-10k.sh [RUNS] [NODES]      (default 5 runs, 10000 nodes)
# needs: go, python3, /usr/bin/time (GNU time)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
runs=${1:-5}
nodes=${2:-10000}
work=$(mktemp -d "${TMPDIR:-/tmp}/yarn-er-preflight-bench.XXXXXX")
server_pid=
cleanup() {
  if [[ -n $server_pid ]]; then kill "$server_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

go build -mod=mod -o "$work/yarn-er" ./cmd/yarn-er

# The fake RM: bodies built once, served by a threaded HTTP server on an ephemeral port.
python3 - "$nodes" "$work/port" yarn/yarnfake/captures/hadoop-3.5.0/conf.json <<'PY' &
import http.server, json, sys, threading
n, portfile, conffile = int(sys.argv[1]), sys.argv[2], sys.argv[3]
types = [("memory-mb", "Mi"), ("vcores", ""), ("yarn.io/gpu", ""), ("yarn.io/fpga", "")]
def res(v):
    return {"memory": v["memory-mb"], "vCores": v["vcores"], "resourceInformations": {"resourceInformation": [
        {"maximumAllocation": 9223372036854775807, "minimumAllocation": 0, "name": t, "resourceType": "COUNTABLE",
         "units": u, "value": v[t]} for t, u in types]}}
total = {"memory-mb": 16384, "vcores": 32, "yarn.io/gpu": 4, "yarn.io/fpga": 2}
half = {k: v // 2 for k, v in total.items()}
zero = {k: 0 for k in total}
node_list = []
for i in range(n):
    used = half if i % 4 == 0 else zero
    avail = {k: total[k] - used[k] for k in total}
    node_list.append({"rack": "/default-rack", "state": "RUNNING", "id": "host%d:45454" % i, "nodeHostName": "host%d" % i,
        "nodeHTTPAddress": "host%d:8042" % i, "lastHealthUpdate": 1796032834144, "version": "3.5.0", "healthReport": "",
        "numContainers": 0, "usedMemoryMB": used["memory-mb"], "availMemoryMB": avail["memory-mb"],
        "usedVirtualCores": used["vcores"], "availableVirtualCores": avail["vcores"],
        "usedResource": res(used), "availableResource": res(avail), "totalResource": res(total)})
big = {"memory-mb": 16384, "vcores": 32, "yarn.io/gpu": 9223372036854775807, "yarn.io/fpga": 9223372036854775807}
bodies = {
    "/ws/v1/cluster/info": {"clusterInfo": {"id": 1, "startedOn": 1, "state": "STARTED", "haState": "ACTIVE",
        "resourceManagerVersion": "3.5.0", "hadoopVersion": "3.5.0"}},
    "/ws/v1/cluster/nodes": {"nodes": {"node": node_list}},
    "/ws/v1/cluster/scheduler": {"scheduler": {"schedulerInfo": {"type": "capacityScheduler", "queueName": "root",
        "queuePath": "root", "capacity": 100.0, "maximumAllocation": res(big), "queues": {"queue": [
            {"type": "capacitySchedulerLeafQueueInfo", "queueName": "default", "queuePath": "root.default",
             "capacity": 100.0, "state": "RUNNING", "maximumAllocation": res(big)}]}}}},
}
bodies = {k: json.dumps(v).encode() for k, v in bodies.items()}
bodies["/conf"] = open(conffile, "rb").read()
class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def do_GET(self):
        body = bodies.get(self.path.split("?", 1)[0])
        self.send_response(200 if body else 404)
        body = body or b'{"RemoteException":{"exception":"NotFoundException","message":"no such path"}}'
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *a):
        pass
srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
with open(portfile + ".tmp", "w") as f:
    f.write(str(srv.server_address[1]))
import os; os.rename(portfile + ".tmp", portfile)
srv.serve_forever()
PY
server_pid=$!
for _ in $(seq 1 600); do [[ -s $work/port ]] && break; sleep 0.1; done
rm_url="http://127.0.0.1:$(cat "$work/port")"
nodes_mb=$(curl -s "$rm_url/ws/v1/cluster/nodes" | wc -c | awk '{printf "%.1f", $1/1048576}')

echo "# $(date -u +%Y-%m-%dT%H:%MZ) on $(nproc) cores, $(go version | cut -d' ' -f3), $nodes nodes, /nodes answer $nodes_mb MB"
echo
echo "| run | wall time | peak RSS (yarn-er) | exit | cluster.capacity |"
echo "|---|---|---|---|---|"
for i in $(seq 1 "$runs"); do
  set +e
  /usr/bin/time -o "$work/time" -f '%e %M' "$work/yarn-er" preflight --rm "$rm_url" --user bench \
    --flink-conf examples/flink-conf.yaml --hadoop-conf docker/conf --containers 20000 -o json >"$work/out.json" 2>"$work/err"
  code=$?
  set -e
  read -r wall rss <"$work/time"
  capacity=$(python3 -c 'import json,sys; print(next(c["status"]+": "+c["message"][:60] for c in json.load(open(sys.argv[1]))["checks"] if c["id"]=="cluster.capacity"))' "$work/out.json")
  echo "| $i | ${wall} s | $((rss / 1024)) MiB | $code | $capacity… |"
done

echo
echo '```'
go test -mod=mod ./preflight/ -run '^$' -bench BenchmarkRunLive10kNodes -benchmem -benchtime=5x | grep -E '^(Benchmark|cpu:)'
echo '```'
