#!/usr/bin/env bash
# CI's build without the live collector (-DGPUIDLE_WITH_CUPTI=OFF, docs/ARCHITECTURE.md "Build
# configurations"): gpuidle analyze, the C++ analysis API and the Python package, built without
# any CUDA header, and every test of that build (the collector's own are left out; the tests of
# what the collector says skip). Run from the repository root after cmake/quickstart.sh (which
# installed the packages); JOBS=n parallel jobs (default 2).
set -euo pipefail
cd "$(dirname "$0")/.."
dir=build-without-cupti
jobs=${JOBS:-2}
cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGPUIDLE_WITH_CUPTI=OFF >/dev/null
# No CUDA toolkit: no compile or link line may name it.
if grep -q -e /usr/local/cuda -e libcupti -e CUPTI/include "$dir/build.ninja"; then
  echo "ci_without_cupti: the build names the CUDA toolkit:" >&2
  grep -o -m 3 -e "[^ ]*/usr/local/cuda[^ ]*" -e "[^ ]*libcupti[^ ]*" "$dir/build.ninja" >&2
  exit 1
fi
cmake --build "$dir" -j "$jobs"
ctest --test-dir "$dir" --output-on-failure -j "$jobs" --timeout 600
echo "ci_without_cupti: passed"
