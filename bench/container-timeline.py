#!/usr/bin/env python3
"""bench/container-timeline.py: where a YARN application's container time goes, from a mini-YARN log.

Usage: bench/container-timeline.py APPLICATION_ID CLUSTER_LOG [--rows]

Reads the ResourceManager's and NodeManagers' container state changes
("Container Transitioned from A to B" and "Container ... transitioned from A to B") for the
application's first attempt in CLUSTER_LOG (docker/mini-yarn's cluster.log, or the
cluster-state directory's log an integration run keeps), and prints, over the application's
non-AM containers, the median, minimum and maximum of each step:

  allocated -> acquired     the AM's heartbeat picking the allocation up
  acquired -> localizing    the AM's startContainers reaching the NodeManager
  localizing -> scheduled   localization (the first container on each node fetches the files)
  scheduled -> running      the NodeManager launching the container
  running -> exited         the container's process, launch scripts included
  exited -> done -> completed  the NodeManager's clean-up and its report to the RM

and the lag from a completion to the next allocation. --rows also prints every container's
times, in seconds from the first event.
"""
import collections
import re
import statistics
import sys

STEPS = ["RM:ALLOCATED", "RM:ACQUIRED", "NM:LOCALIZING", "NM:SCHEDULED", "NM:RUNNING",
         "NM:EXITED_WITH_SUCCESS", "NM:DONE", "RM:COMPLETED"]
LINE = re.compile(r"^\S+ (\d\d):(\d\d):(\d\d),(\d+) .*?container_(\d+_\d+)_01_(\d+)\D.*?"
                  r"[Tt]ransitioned from (\S+) to (\S+)")


def read(app, path):
    """Container number -> {"RM:STATE" or "NM:STATE": first time in seconds of the day}."""
    want = app.removeprefix("application_")
    events = collections.defaultdict(dict)
    with open(path, errors="replace") as f:
        for line in f:
            m = LINE.match(line)
            if not m or m.group(5) != want:
                continue
            h, mi, s, ms = (int(g) for g in m.group(1, 2, 3, 4))
            side = "RM:" if "rmcontainer" in line else "NM:"
            events[int(m.group(6))].setdefault(side + m.group(8), h * 3600 + mi * 60 + s + ms / 1000)
    return events


def main(argv):
    if len(argv) < 3 or argv[1].startswith("-"):
        sys.stderr.write(__doc__)
        return 2
    app, path, rows = argv[1], argv[2], "--rows" in argv[3:]
    events = read(app, path)
    # Container 1 is the AM's; containers reserved but never allocated have no steps.
    ranks = {c: e for c, e in events.items() if c > 1 and "RM:ALLOCATED" in e}
    if not ranks:
        sys.stderr.write(f"container-timeline: no container of {app} in {path}\n")
        return 1
    if rows:
        t0 = min(min(e.values()) for e in events.values())
        print("container " + " ".join(f"{s.split(':')[1][:9]:>9}" for s in STEPS))
        for c in sorted(ranks):
            print(f"{c:9d} " + " ".join(f"{ranks[c][s] - t0:9.3f}" if s in ranks[c] else f"{'-':>9}" for s in STEPS))
    print(f"{app}: {len(ranks)} containers besides the AM's")
    for a, b in zip(STEPS, STEPS[1:]):
        xs = [e[b] - e[a] for e in ranks.values() if a in e and b in e]
        if xs:
            print(f"  {a.split(':')[1].lower():>21} -> {b.split(':')[1].lower():<21} median {statistics.median(xs):.3f} s"
                  f"  min {min(xs):.3f}  max {max(xs):.3f}  (n={len(xs)})")
    done = sorted(e["RM:COMPLETED"] for e in ranks.values() if "RM:COMPLETED" in e)
    allocs = sorted(e["RM:ALLOCATED"] for e in ranks.values())
    lags = []
    for a in allocs:
        before = [d for d in done if d <= a]
        if before:
            lags.append(a - before[-1])
    if lags:
        print(f"  completion -> next allocation median {statistics.median(lags):.3f} s  max {max(lags):.3f}  (n={len(lags)})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
