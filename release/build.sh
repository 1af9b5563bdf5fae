#!/usr/bin/env bash
# make release: yarn-er for linux/amd64 and linux/arm64 into dist/ (docs/install.md):
#   yarn-er-linux-ARCH        static, CGO_ENABLED=0: every backend but NVML; runs on any Linux
#   yarn-er-linux-ARCH-nvml   cgo with NVML (libnvidia-ml.so.1 loaded at run time), glibc 2.17 or newer
#   yarn-er-am-linux-ARCH     static: the small ApplicationMaster binary that submit stages beside either
#   SHA256SUMS                sha256sum's format: sha256sum -c SHA256SUMS
# The cgo builds use zig (PyPI's ziglang, installed below .tools/ unless ZIG names one) as the C
# compiler for glibc 2.17. Environment: DIST (dist), ARCHES ("amd64 arm64"), GLIBC (2.17), VERSION
# (git describe), ZIG, ZIGLANG_VERSION, GO.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=$PWD
GO=${GO:-go}
DIST=${DIST:-dist}
ARCHES=${ARCHES:-amd64 arm64}
GLIBC=${GLIBC:-2.17}
ZIGLANG_VERSION=${ZIGLANG_VERSION:-0.17.0}

# The stamp of make build's binary, set by -ldflags (cmd/yarn-er/main.go): the version from git
# describe, the commit, and the commit's time (so that a rebuild of one commit gives the same bytes).
VERSION=${VERSION:-$(git describe --tags --always --dirty 2>/dev/null || echo dev)}
commit=$(git rev-parse HEAD 2>/dev/null || true)
date=$(TZ=UTC git log -1 --date=format-local:%Y-%m-%dT%H:%M:%SZ --format=%cd 2>/dev/null || true)
ldflags="-s -w -X main.version=$VERSION -X main.commit=$commit -X main.date=$date"

if [[ -z ${ZIG:-} ]]; then
  ZIG=$root/.tools/ziglang-$ZIGLANG_VERSION/ziglang/zig
  if [[ ! -x $ZIG ]]; then
    if ! python3 -m pip --version >/dev/null 2>&1; then
      echo "release: the NVML builds need zig: install python3 with pip (zig comes from PyPI's ziglang), or set ZIG to a zig $ZIGLANG_VERSION binary" >&2
      exit 1
    fi
    echo "== zig: pip install ziglang==$ZIGLANG_VERSION into .tools/"
    PIP_ROOT_USER_ACTION=ignore python3 -m pip install --disable-pip-version-check --quiet --no-warn-script-location \
      --target "$root/.tools/ziglang-$ZIGLANG_VERSION" "ziglang==$ZIGLANG_VERSION"
  fi
fi
export ZIG
echo "== zig $("$ZIG" version)"

nvml_dir=$("$GO" list -m -f '{{.Dir}}' github.com/NVIDIA/go-nvml)/pkg/nvml
work=$(mktemp -d "${TMPDIR:-/tmp}/yarn-er-release.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$DIST"

# The NVML stub of release/zig-cc: every function nvml.h declares, under its versioned names
# (nvmlInit_v2) and its unversioned ones (nvmlInit, declared with NVML_NO_UNVERSIONED_FUNC_DEFS),
# in a library named libdl.so.2.
{
  "$ZIG" cc -target "x86_64-linux-gnu.$GLIBC" -E -P "$nvml_dir/nvml.h"
  "$ZIG" cc -target "x86_64-linux-gnu.$GLIBC" -E -P -DNVML_NO_UNVERSIONED_FUNC_DEFS "$nvml_dir/nvml.h"
  # lld keeps one library per soname, and -ldl comes after the stub: the stub stands for libdl too.
  printf '%s(\n' dlopen dlsym dlclose dlerror dlinfo dladdr dlvsym
} | grep -oE '\b(nvml|dl)[A-Za-z0-9_]*[[:space:]]*\(' | tr -d '( \t' | sort -u |
  sed 's/.*/void &(void) {}/' >"$work/nvml-stub.c"
echo "== NVML stub: $(wc -l <"$work/nvml-stub.c") functions of $nvml_dir/nvml.h"

built=()
for arch in $ARCHES; do
  case $arch in
    amd64) target=x86_64-linux-gnu.$GLIBC ;;
    arm64) target=aarch64-linux-gnu.$GLIBC ;;
    *) echo "release: no zig target for GOARCH $arch" >&2; exit 2 ;;
  esac
  out=$DIST/yarn-er-linux-$arch
  echo "== $out (CGO_ENABLED=0)"
  CGO_ENABLED=0 GOOS=linux GOARCH=$arch "$GO" build -trimpath -ldflags "$ldflags" -o "$out" ./cmd/yarn-er

  echo "== $out-nvml (cgo, zig cc -target $target)"
  stub=$work/libnvml-stub-$arch.so
  "$ZIG" cc -target "$target" -shared -Wl,-soname,libdl.so.2 -o "$stub" "$work/nvml-stub.c"
  # go-nvml's header warns about its own deprecated functions: not ours to fix, so not shown.
  # zig links with -z now by default, but the NVML functions can only be bound on their first call,
  # after go-nvml's dlopen: -z lazy, as GNU ld does by default. (Flags go in CGO_*FLAGS, which are
  # part of go's build cache key; release/zig-cc's own bytes are not: after editing it, go clean -cache.)
  CGO_ENABLED=1 GOOS=linux GOARCH=$arch ZIG_TARGET=$target NVML_STUB=$stub CC="$root/release/zig-cc" \
    CGO_CFLAGS="-O2 -g -Wno-deprecated-declarations" CGO_LDFLAGS="-O2 -g -Wl,-z,lazy" \
    "$GO" build -trimpath -ldflags "$ldflags" -o "$out-nvml" ./cmd/yarn-er
  am=$DIST/yarn-er-am-linux-$arch
  echo "== $am (CGO_ENABLED=0)"
  CGO_ENABLED=0 GOOS=linux GOARCH=$arch "$GO" build -trimpath -ldflags "-s -w -X main.version=$VERSION" -o "$am" ./cmd/yarn-er-am
  built+=("${out##*/}" "${out##*/}-nvml" "${am##*/}")
done

(cd "$DIST" && rm -f SHA256SUMS && sha256sum "${built[@]}" >SHA256SUMS.tmp && mv SHA256SUMS.tmp SHA256SUMS)
echo "== $DIST/SHA256SUMS"
cat "$DIST/SHA256SUMS"
ls -l "$DIST"
