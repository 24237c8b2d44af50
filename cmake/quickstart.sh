#!/usr/bin/env bash
# The README's two commands (run from the repository root):
#   cmake/quickstart.sh        install what is missing, build, analyse a bundled H200 trace
#   cmake/quickstart.sh test   install what is missing, build, run every test
# Works on a fresh Debian 12 machine (apt); safe to run again (installs nothing twice).
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:-run}
case "$mode" in run|test) ;; *) echo "usage: $0 [run|test]" >&2; exit 2 ;; esac

packages=(cmake ninja-build g++ pkg-config zlib1g-dev libabsl-dev rapidjson-dev
          libgtest-dev libgmock-dev libbenchmark-dev python3
          pybind11-dev python3-dev python3-pytest chromium python3-jsonschema)
cmake/install_packages.sh "${packages[@]}"

jobs=$(nproc 2>/dev/null || echo 2)
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j "$jobs"

if [ "$mode" = test ]; then
  ctest --test-dir build --output-on-failure -j "$jobs" --timeout 600
  exit
fi

# The main job. With a GPU: profile a bundled example live (examples/cuda/mixed.cu: host work
# and a storm of tiny kernels). Without one: analyse a bundled trace that torch.profiler
# recorded on an H200 (examples/python/mixed_resnet.py).
if [ -e /dev/nvidiactl ] && [ -x build/bin/gpuidle_example_mixed ]; then
  exec build/bin/gpuidle run -- build/bin/gpuidle_example_mixed
fi
exec build/bin/gpuidle analyze tests/data/traces/torch/mixed_resnet.json.gz
