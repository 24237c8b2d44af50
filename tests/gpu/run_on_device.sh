#!/usr/bin/env bash
# The one script for the GPU machine (../shared/GPU.md): runs every ground-truth scenario of
# examples/cuda through each way in (C++ API, `gpuidle run`, LD_PRELOAD), PyTorch under
# `gpuidle run` (a launch-bound loop; a DataLoader that forks workers), the never-break checks
# that need a GPU, and the overhead benchmark. Reports, traces and logs go to $OUT; the tables
# come last (tests/gpu/scenario_table.py writes them, and $OUT/validation.md).
#
#   here:   tests/gpu/make_device_bundle.sh
#   device: run(carry [".devbundle", ".devdeps"],
#               "tests/gpu/run_on_device.sh [scenarios] [overhead] [python] [python-overhead] [probe]")
#
# With no argument it runs scenarios and overhead; one call may last 10 minutes at most, so a
# round runs the parts as separate calls on the same warm machine. `python` builds the Python
# package there (it must be built for the machine's Python; Abseil and RapidJSON come from
# .devdeps: ../shared/tools/stage-device-deps.sh rapidjson-dev zlib1g-dev) and runs the Python
# package's GPU proof; `python-overhead` then its overhead benchmark (same warm machine).
set -uo pipefail
parts=" ${*:-scenarios overhead} "
cd "$(dirname "$0")/../.."
root=$PWD
b=$root/.devbundle
out=${OUT:-/tmp/gpuidle-out}
mkdir -p "$out/reports" "$out/traces" "$out/logs" "$out/fork"
export LD_LIBRARY_PATH=$b/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export PYTHONUNBUFFERED=1
log=$out/device.log
{
  date -u '+date: %Y-%m-%d %H:%M UTC'
  nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader | sed 's/^/gpu: /'
  echo "cuda: $(nvcc --version 2>/dev/null | sed -n 's/.*release \([0-9.]*\).*/\1/p')"
} | tee "$log"

# Runs one command, keeps its output, records its exit status.
run() {
  local name=$1
  shift
  timeout 180 "$@" >"$out/logs/$name.log" 2>&1
  local rc=$?
  echo "$name: exit $rc" | tee -a "$log"
  return 0
}

if [[ $parts == *" scenarios "* ]]; then
scenarios=(host_work_marked host_work_unmarked pageable_h2d tiny_kernels sync_after_kernel
           d2h_after_kernel cross_stream_wait healthy mixed)


# Tens of thousands of kernels are enough, and keep the recorded traces small for CI replay.
declare -A iterations=([tiny_kernels]=20 [mixed]=20)
for s in "${scenarios[@]}"; do
  args=()
  [ -n "${iterations[$s]:-}" ] && args=(--iterations "${iterations[$s]}")
  run "$s.api" env GPUIDLE_OUT="$out/reports/$s.api.json" GPUIDLE_FORMAT=json \
    GPUIDLE_TRACE="$out/traces/$s.api.trace.json" "$b/bin/gpuidle_example_${s}_api" "${args[@]}"
  run "$s.run" "$b/bin/gpuidle" run --out "$out/reports/$s.run.json" --format json \
    --trace "$out/traces/$s.run.trace.json" -- "$b/bin/gpuidle_example_$s" "${args[@]}"
  run "$s.preload" env LD_PRELOAD="$b/lib/libgpuidle.so" GPUIDLE_OUT="$out/reports/$s.preload.json" \
    GPUIDLE_FORMAT=json GPUIDLE_TRACE="$out/traces/$s.preload.trace.json" "$b/bin/gpuidle_example_$s" \
    "${args[@]}"
done

# PyTorch, unmodified, under gpuidle run.
run torch_tiny_mlp.run "$b/bin/gpuidle" run --out "$out/reports/torch_tiny_mlp.run.json" \
  --format json --trace "$out/traces/torch_tiny_mlp.run.trace.json" -- \
  python3 examples/python/tiny_mlp_launch_bound.py --plain --steps 30
run torch_dataloader.run "$b/bin/gpuidle" run --out "$out/reports/torch_dataloader.run.json" \
  --format json -- python3 examples/python/dataloader_starved.py --plain --steps 12

run torch_fork_workers.run "$b/bin/gpuidle" run --out "$out/fork/report.%p.json" --format json \
  -- python3 tests/gpu/fork_workers.py
echo "fork_workers: $(ls "$out/fork" | wc -l) report file(s): $(ls "$out/fork" | tr '\n' ' ')" | tee -a "$log"

# NCCL launches its own kernels: they must come with their launching calls; one report per rank.
if [ "$(nvidia-smi -L | wc -l)" -ge 2 ]; then
  run torch_nccl.run "$b/bin/gpuidle" run --out "$out/reports/torch_nccl.rank%r.json" --format json \
    --trace "$out/traces/torch_nccl.rank%r.trace.json" -- \
    torchrun --standalone --nproc-per-node=2 tests/gpu/nccl_ranks.py
  for r in 0 1; do
    python3 tests/gpu/check_nccl_trace.py "$out/traces/torch_nccl.rank$r.trace.json" | sed "s/^/rank $r: /" | tee -a "$log"
  done
  "$b/bin/gpuidle" analyze "$out/traces/torch_nccl.rank0.trace.json" \
    "$out/traces/torch_nccl.rank1.trace.json" >"$out/logs/torch_nccl.merged.txt" 2>&1
  grep -iE "comm|wait" "$out/logs/torch_nccl.merged.txt" | head -5 | tee -a "$log"
else
  echo "NCCL across ranks: skipped, needs 2 GPUs" | tee -a "$log"
fi

# Never break the host: exit status passes through, output unchanged, bad settings are one
# warning, an unwritable output path is one warning.
"$b/bin/gpuidle_example_healthy" --iterations 20 >"$out/logs/plain_healthy.out" 2>&1
"$b/bin/gpuidle" run --quiet -- sh -c "'$b/bin/gpuidle_example_healthy' --iterations 20; exit 3" \
  >"$out/logs/exit3.out" 2>"$out/logs/exit3.err"
echo "exit status through gpuidle run: $? (expected 3)" | tee -a "$log"
GPUIDLE_MAX_RECORDS=banana "$b/bin/gpuidle_example_healthy_api" --iterations 20 \
  >"$out/logs/badsetting.out" 2>"$out/logs/badsetting.err"
echo "bad setting: exit $?, stderr lines $(wc -l <"$out/logs/badsetting.err"): $(head -c 200 "$out/logs/badsetting.err")" | tee -a "$log"
"$b/bin/gpuidle" run --out /proc/forbidden/report.json -- "$b/bin/gpuidle_example_healthy" \
  --iterations 20 >"$out/logs/unwritable.out" 2>"$out/logs/unwritable.err"
echo "unwritable output: exit $?; $(grep -c warning "$out/logs/unwritable.err") warning line(s)" | tee -a "$log"
# The example prints its wall time: compare without digits.
cmp -s <(grep -v '^gpuidle' "$out/logs/unwritable.out" | tr -d '0-9') <(tr -d '0-9' <"$out/logs/plain_healthy.out") &&
  echo "program output unchanged under gpuidle: yes" | tee -a "$log" ||
  echo "program output unchanged under gpuidle: NO" | tee -a "$log"

python3 tests/gpu/scenario_table.py "$b/bin/gpuidle" "$out" | tee "$out/validation.md"
fi

# A probe of CUPTI's callbacks: which correlation id kernels carry when gpuidle also times the
# driver calls made inside runtime calls (tests/gpu/check_nested_calls.py).
if [[ $parts == *" probe "* ]]; then
  GPUIDLE_BENCH_LEAVE_OUT=nested-call-skip GPUIDLE_QUIET=1 \
    GPUIDLE_TRACE="$out/traces/probe_nested.trace.json" "$b/bin/gpuidle_example_tiny_kernels_api" \
    --iterations 2 >"$out/logs/probe_nested.log" 2>&1
  python3 tests/gpu/check_nested_calls.py "$out/traces/probe_nested.trace.json" 2>&1 | tee -a "$log"
fi

# Overhead benchmark (tiny kernels vs the bare CUPTI baseline; healthy loop vs untraced), with
# the diagnostics that price each part of the collector (VARIANTS, run_overhead_benchmark.sh).
if [[ $parts == *" overhead "* ]]; then
  OUT=$out/logs/overhead VARIANTS=${VARIANTS-} API_MODES=${API_MODES-kinds} ROUNDS=${ROUNDS-} TIMED_BARE=${TIMED_BARE-} \
    tests/benchmarks/overhead/run_overhead_benchmark.sh "$b" "${REPEATS:-9}" >"$out/overhead.log" 2>&1
  echo "overhead benchmark: exit $?" | tee -a "$log"
  tail -n 16 "$out/overhead.log"
fi

if [[ $parts == *" python "* ]]; then
  py=$(command -v python3)
  pybuild=/tmp/gpuidle-pybuild
  zlib=()
  # The machine may lack zlib's header: the staged one, with the system's libz.so.1.
  if [[ ! -e /usr/include/zlib.h ]]; then
    zlib=(-DZLIB_INCLUDE_DIR="$root/.devdeps/usr/include"
          -DZLIB_LIBRARY="$(ls /usr/lib/x86_64-linux-gnu/libz.so.1 /lib/x86_64-linux-gnu/libz.so.1 2>/dev/null | head -1)")
  fi
  export CMAKE_PREFIX_PATH=$root/.devdeps/usr
  { cmake -S . -B "$pybuild" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGPUIDLE_BUILD_TESTS=OFF \
      -DGPUIDLE_BUILD_EXAMPLES=OFF -DPython3_EXECUTABLE="$py" "${zlib[@]}" &&
    cmake --build "$pybuild" -j "$(nproc)"; } >"$out/logs/python_build.log" 2>&1
  echo "python package build: exit $? ($(python3 --version))" | tee -a "$log"
  # pip, as users install it (scikit-build-core; no network: --no-build-isolation).
  SKBUILD_CMAKE_ARGS="$(IFS=';'; echo "${zlib[*]}")" timeout 400 "$py" -m pip install \
    --no-build-isolation --no-deps --target /tmp/gpuidle-pip . >"$out/logs/pip_install.log" 2>&1
  echo "pip install --no-build-isolation .: exit $?;" \
    "$(PYTHONPATH=/tmp/gpuidle-pip "$py" -c 'import gpuidle; print("imports from", gpuidle.__file__)' 2>&1 | tail -1)" | tee -a "$log"
  export PYTHONPATH=$pybuild/python
  mkdir -p "$out/python"
  for s in dataloader_starved tiny_mlp_launch_bound item_sync healthy_matmul; do
    run "py_$s" python3 "examples/python/$s.py" --gpuidle "$out/python/$s.json" --steps 12
  done
  python3 tests/gpu/python/check_reports.py "$out/python" | tee "$out/python_table.md"
  # How API records are switched on, for a collection that starts after CUDA was initialised
  # (collect/collector.h ApiRecords): host calls recorded in each mode.
  for mode in callbacks kinds; do
    GPUIDLE_BENCH_API_RECORDS=$mode python3 examples/python/item_sync.py \
      --gpuidle "$out/python/api_$mode.json" --steps 6 >"$out/logs/py_api_$mode.log" 2>&1
    echo "API records mode $mode: $(python3 -c 'import json, sys, collections
e = json.load(open(sys.argv[1]))["traceEvents"]
c = collections.Counter(x["name"] for x in e if x.get("cat") in ("cuda_runtime", "cuda_driver"))
print(sum(c.values()), "calls:", dict(c.most_common(6)))' "$out/python/api_$mode.trace.json" 2>&1 | tail -1)" | tee -a "$log"
  done
  run py_coexistence python3 tests/gpu/python/coexistence.py
  cat "$out/logs/py_coexistence.log" | tee -a "$log"
  run py_workers python3 tests/gpu/python/workers.py "$out/python/workers"
  grep -v '^gpuidle: ' "$out/logs/py_workers.log" | tail -3 | tee -a "$log"
  # Profiles one after another; the speed after the last, with and without detaching CUPTI.
  for leave_out in "" detach; do
    GPUIDLE_BENCH_LEAVE_OUT=$leave_out timeout 180 python3 tests/gpu/python/repeated_profiles.py \
      2>&1 | grep -v '^gpuidle: ' | tail -2 | tee -a "$log"
  done
fi

# The Python package's overhead (needs the package that `python` built on this machine).
if [[ $parts == *" python-overhead "* ]]; then
  PYTHONPATH=/tmp/gpuidle-pybuild/python OUT=$out/logs/torch_overhead \
    GPUIDLE_BARE_CUPTI=$b/lib/libgpuidle_bare_cupti.so API_MODES=${API_MODES-kinds} \
    PY_VARIANTS=${PY_VARIANTS-} LEAVE_OUTS=${LEAVE_OUTS-} PY_CONFIGS=${PY_CONFIGS-} \
    tests/benchmarks/python/run_torch_overhead.sh "${PY_REPEATS:-5}" >"$out/torch_overhead.log" 2>&1
  echo "torch overhead benchmark: exit $?" | tee -a "$log"
  tail -n 12 "$out/torch_overhead.log"
fi

# At most 8 files come back from the device: everything else travels in one archive (traces
# gzipped: they become the replay data of tests/data/traces/live).
rm -f "$out"/traces/*.api.trace.json "$out"/traces/*.preload.trace.json  # read back above
gzip -f "$out"/traces/*.json 2>/dev/null
mkdir -p "$out/python"
tar -C "$out" -czf "$out/results.tar.gz" reports traces logs fork python
rm -rf "$out/reports" "$out/traces" "$out/logs" "$out/fork" "$out/python"
ls -l "$out"
