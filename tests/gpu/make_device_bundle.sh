#!/usr/bin/env bash
# Runs here (no GPU): builds gpuidle, the CUDA scenarios and the overhead benchmark, and packs
# what the GPU machine needs into .devbundle/ (git-ignored, small enough to carry): stripped
# binaries, libgpuidle.so, the bare-CUPTI baseline and Debian's Abseil runtime libraries (the
# GPU machine has none). Binaries built on Debian 12 run on the GPU machine's newer Ubuntu.
#
#   tests/gpu/make_device_bundle.sh [BUILD_DIR]     then: run(carry [".devbundle"],
#                                                         "tests/gpu/run_on_device.sh")
#
# PROBES=1 builds it with the collector's benchmark probes (-DGPUIDLE_COLLECTOR_PROBES=ON: the
# overhead benchmark's VARIANTS and the `probe` part); by default the bundle is the product.
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}
probes=OFF
[[ ${PROBES:-0} == 1 ]] && probes=ON
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGPUIDLE_COLLECTOR_PROBES=$probes \
  >/dev/null
cmake --build "$build" -j "$(nproc)" --target gpuidle gpuidle_shared gpuidle_bench_overhead \
  gpuidle_bare_cupti gpuidle_wall_sampler gpuidle_pm_sampling_probe $(cd examples/cuda && ls *.cu | sed 's/\.cu$//; s/^/gpuidle_example_/; p; s/$/_api/' | sort -u)
rm -rf .devbundle
mkdir -p .devbundle/bin .devbundle/lib
cp "$build"/bin/gpuidle "$build"/bin/gpuidle_example_* "$build"/bin/gpuidle_bench_overhead \
  "$build"/bin/gpuidle_pm_sampling_probe .devbundle/bin/
cp -P "$build"/lib/libgpuidle.so* "$build"/lib/libgpuidle_bare_cupti.so \
  "$build"/lib/libgpuidle_wall_sampler.so .devbundle/lib/
# Debian's Abseil shared libraries, and their own dependencies from the same package.
for lib in $(ldd "$build"/lib/libgpuidle.so "$build"/bin/gpuidle | awk '/libabsl_/ {print $3}' | sort -u); do
  cp -L "$lib" .devbundle/lib/
done
strip --strip-debug .devbundle/bin/* .devbundle/lib/*.so* 2>/dev/null || true
du -sh .devbundle
