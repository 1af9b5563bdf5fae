#!/usr/bin/env bash
# Runs every fuzz target of the module for FUZZTIME each (default 10s; a count such as 5000x works
# too) and fails only on a finding. Go's fuzz coordinator sometimes ends a clean time-based run with a
# bare "context deadline exceeded" and a non-zero status; that is not a finding and is reported as a
# note. A finding is a run that wrote a failing input ("Failing input written to testdata/fuzz/...");
# any other failure (a build error, a failing seed) fails too.
#
# Usage: bench/fuzz.sh [package-pattern ...]   (default ./...)
#   FUZZTIME=10m bench/fuzz.sh ./conf/...     # a campaign
#   FUZZ_LOG=dir                                # keep each target's log in dir
#   FUZZFLAGS=-parallel=1                       # extra go test flags (fewer workers on a shared host)
#   FUZZ_RUN='^Fuzz(ParseLedger|Text)$'         # only the targets matching this regexp
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
fuzztime=${FUZZTIME:-10s}
go=${GO:-go}
logdir=${FUZZ_LOG:-$(mktemp -d "${TMPDIR:-/tmp}/yarn-er-fuzz.XXXXXX")}
mkdir -p "$logdir"
patterns=("$@")
((${#patterns[@]})) || patterns=(./...)

failed=() notes=() ran=0
for pkg in $($go list "${patterns[@]}"); do
  targets=$($go test -list '^Fuzz' "$pkg" 2>/dev/null | grep '^Fuzz' | grep -E "${FUZZ_RUN:-.}" || true)
  for fz in $targets; do
    log="$logdir/$(basename "$pkg").$fz.log"
    echo "== $pkg $fz ($fuzztime)"
    # shellcheck disable=SC2086 # FUZZFLAGS is a list of flags
    $go test -run '^$' -fuzz "^$fz\$" -fuzztime "$fuzztime" ${FUZZFLAGS:-} "$pkg" >"$log" 2>&1
    rc=$?
    ran=$((ran + 1))
    tail -n 2 "$log"
    if ((rc == 0)); then
      continue
    fi
    if grep -q 'Failing input written' "$log"; then
      failed+=("$pkg $fz: finding, see $log")
    elif grep -q 'context deadline exceeded' "$log" && ! grep -qE -- '--- FAIL|panic:|build failed|\[setup failed\]' "$log"; then
      notes+=("$pkg $fz: ended with a bare 'context deadline exceeded' (not a finding)")
    else
      failed+=("$pkg $fz: exit $rc, see $log")
    fi
  done
done
echo "== $ran fuzz targets, $fuzztime each; logs in $logdir"
for n in "${notes[@]}"; do echo "note: $n"; done
if ((${#failed[@]})); then
  for f in "${failed[@]}"; do echo "FAIL: $f" >&2; done
  exit 1
fi
