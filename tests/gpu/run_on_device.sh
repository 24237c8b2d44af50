#!/usr/bin/env bash
# The one script for the GPU machine (../shared/GPU.md): runs every ground-truth scenario of
# examples/cuda through each way in (C++ API, `gpuidle run`, LD_PRELOAD), PyTorch under
# `gpuidle run` (a launch-bound loop; a DataLoader that forks workers), the never-break checks
# that need a GPU, and the overhead benchmark. Reports, traces and logs go to $OUT; the tables
# come last (tests/gpu/scenario_table.py writes them, and $OUT/validation.md).
#
#   here:   tests/gpu/make_device_bundle.sh
#   device: run(carry [".devbundle", ".devdeps"],
#               "tests/gpu/run_on_device.sh [scenarios] [overhead] [python] [python-overhead] [probe]
#                [unchanged] [faults] [package] [profile-overhead] [sampled] [ranks] [gains]
#                [two-gpus] [observer] [leave-out] [round3] [where-time-goes]
#                [periodic] [answers] [metrics] [throughput] [shared] [serving]")
#
# With no argument it runs scenarios and overhead; one call may last 10 minutes at most, so a
# round runs the parts as separate calls on the same warm machine. `python` builds the Python
# package there (it must be built for the machine's Python; Abseil and RapidJSON come from
# .devdeps: ../shared/tools/stage-device-deps.sh rapidjson-dev zlib1g-dev) and runs the Python
# package's GPU proof; `python-overhead` then its overhead benchmark (same warm machine).
# `profile-overhead` builds the same package and prices one whole profile (start and stop
# included) on tiny MLP, ResNet-50, GPT-2 small and the healthy loop, against torch.profiler
# and the bare CUPTI floors (tests/benchmarks/python/run_profile_overhead.sh).
# `unchanged` builds the same package (if `python` has not) and profiles the real-client
# programs of examples/python/unchanged/ (transformers Trainer, Lightning, JAX, CuPy,
# torch.compile) with no change to their code, then tests/gpu/python/check_unchanged.py.
# `sampled` builds the same package and proves sampled collection (tests/gpu/python/
# sampled_collection.py: windows, summaries, metrics file and port, shares against a full trace).
# `ranks` runs a torch.distributed NCCL job under `gpuidle run` (one rank per GPU, at most two)
# and checks each live rank's report for what the merge of ranks needs.
# `two-gpus` builds the same package and runs the two-GPU proof (issue 17; a one-rank dry run on
# one GPU): tests/gpu/python/ddp_job.py, tests/gpu/python/check_two_gpus.py.
# `gains` builds the same package and checks the advice's predicted gains: each Python scenario
# before and after the fix its advice names (tests/gpu/python/advice_gains.py).
# `faults` runs the fault matrix's GPU rows (docs/RELIABILITY.md; it builds the same package for
# its gpuidle.profile() rows) and prints one PASS/FAIL/SKIP line per row.
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

# The Python package, built on this machine for its Python (`python` and `unchanged` use it; the
# second call of a round finds it built).
py=$(command -v python3)
pybuild=/tmp/gpuidle-pybuild
zlib=()
build_python_package() {
  [[ -n ${python_package_built:-} ]] && return 0
  # The machine may lack zlib's header: the staged one, with the system's libz.so.1.
  if [[ ! -e /usr/include/zlib.h ]]; then
    zlib=(-DZLIB_INCLUDE_DIR="$root/.devdeps/usr/include"
          -DZLIB_LIBRARY="$(ls /usr/lib/x86_64-linux-gnu/libz.so.1 /lib/x86_64-linux-gnu/libz.so.1 2>/dev/null | head -1)")
  fi
  export CMAKE_PREFIX_PATH=$root/.devdeps/usr
  # PY_PROBES=1: the package with the collector's probes (a product build otherwise; without
  # GPUIDLE_BENCH_* variables a probe build collects as the product does), one build for a round
  # that also prices collector parts.
  local probes=()
  [[ ${PY_PROBES:-} == 1 ]] && probes=(-DGPUIDLE_COLLECTOR_PROBES=ON)
  { cmake -S . -B "$pybuild" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGPUIDLE_BUILD_TESTS=OFF \
      -DGPUIDLE_BUILD_EXAMPLES=OFF -DPython3_EXECUTABLE="$py" "${zlib[@]}" "${probes[@]}" &&
    cmake --build "$pybuild" -j "$(nproc)"; } >>"$out/logs/python_build.log" 2>&1
  echo "python package build: exit $? ($(python3 --version))" | tee -a "$log"
  python_package_built=1
  # The module finds its libgpuidle.so through RUNPATH, which LD_LIBRARY_PATH (the bundle's lib,
  # built here earlier and perhaps from other sources) overrides: the package's own goes first.
  export LD_LIBRARY_PATH=$pybuild/lib:$LD_LIBRARY_PATH
  # Debian's Abseil, staged (the bundle's lib has a copy too, when a bundle came along).
  [[ -d $root/.devdeps/usr/lib/x86_64-linux-gnu ]] &&
    export LD_LIBRARY_PATH=$LD_LIBRARY_PATH:$root/.devdeps/usr/lib/x86_64-linux-gnu
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
# driver calls made inside runtime calls (tests/gpu/check_nested_calls.py). Needs a bundle built
# with probes (PROBES=1 tests/gpu/make_device_bundle.sh); a product build ignores GPUIDLE_BENCH_*.
if [[ $parts == *" probe "* ]]; then
  GPUIDLE_BENCH_LEAVE_OUT=nested-call-skip GPUIDLE_QUIET=1 \
    GPUIDLE_TRACE="$out/traces/probe_nested.trace.json" "$b/bin/gpuidle_example_tiny_kernels_api" \
    --iterations 2 >"$out/logs/probe_nested.log" 2>&1
  python3 tests/gpu/check_nested_calls.py "$out/traces/probe_nested.trace.json" 2>&1 | tee -a "$log"
fi

# Overhead benchmark (tiny kernels vs the bare CUPTI baseline; healthy loop vs untraced), with
# the diagnostics that price each part of the collector (VARIANTS, run_overhead_benchmark.sh).
if [[ $parts == *" overhead "* ]]; then
  OUT=$out/logs/overhead VARIANTS=${VARIANTS-} API_MODES=${API_MODES-} ROUNDS=${ROUNDS-} TIMED_BARE=${TIMED_BARE-} \
    tests/benchmarks/overhead/run_overhead_benchmark.sh "$b" "${REPEATS:-9}" >"$out/overhead.log" 2>&1
  echo "overhead benchmark: exit $?" | tee -a "$log"
  tail -n 16 "$out/overhead.log"
fi

if [[ $parts == *" python "* ]]; then
  build_python_package
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
  run py_unwritable python3 tests/gpu/python/unwritable_output.py
  grep -v '^gpuidle: ' "$out/logs/py_unwritable.log" | tail -1 | tee -a "$log"
  run py_coexistence python3 tests/gpu/python/coexistence.py
  cat "$out/logs/py_coexistence.log" | tee -a "$log"
  run py_workers python3 tests/gpu/python/workers.py "$out/python/workers"
  grep -v '^gpuidle: ' "$out/logs/py_workers.log" | tail -3 | tee -a "$log"
  # Profiles one after another; the speed after the last (the same without detaching CUPTI
  # needs a probe build: GPUIDLE_BENCH_LEAVE_OUT=detach, lib/collect/collector_probes.h).
  timeout 180 python3 tests/gpu/python/repeated_profiles.py 2>&1 | grep -v '^gpuidle: ' |
    tail -2 | tee -a "$log"
fi

# Sampled collection (issue 15): a tiny MLP trains ~20 s under gpuidle.profile(sample="1/4") with
# summaries, a metrics file and a scrape port, then in full; PASS/FAIL lines and the table in
# $out/sampled.md, the summaries and metrics files in python/sampled/ of results.tar.gz.
# Many ranks (issue 16): live rank reports carry what the merge needs. On one GPU a one-rank job
# (NCCL refuses two ranks on one device); with two, the straggler job, merged from its reports.
if [[ $parts == *" ranks "* ]]; then
  n=$(( $(nvidia-smi -L | wc -l) >= 2 ? 2 : 1 ))
  mkdir -p "$out/ranks"
  run ranks.run env CUDA_VISIBLE_DEVICES="$( ((n == 2)) && echo 0,1 || echo 0)" \
    "$b/bin/gpuidle" run --out "$out/ranks/report.rank%r.json" --format json \
    --trace "$out/ranks/trace.rank%r.trace.json" -- \
    torchrun --standalone --nproc-per-node=$n tests/gpu/nccl_ranks.py
  python3 tests/gpu/check_rank_report.py "$out/ranks/report.rank0.json" | tee -a "$log"
  "$b/bin/gpuidle" analyze "$out/ranks/"report.rank*.json >"$out/ranks/merged.txt" 2>&1
  echo "merged from the reports: exit $?" | tee -a "$log"
  sed -n '/^rank 0 GPU/,/^$/p; /^job/,/^$/p' "$out/ranks/merged.txt" | tee -a "$log"
fi

# The two-GPU proof (issue 17): a DDP job whose rank 1 is 30 ms slower per step, under `gpuidle
# run` (%r outputs, merged afterwards from reports and from traces) and under
# gpuidle.profile(merge_ranks=True); the same job without a straggler; one process that sees
# both GPUs and uses one. On one GPU a one-rank dry run of the same commands (the checks that need
# two ranks say SKIP). tests/gpu/python/check_two_gpus.py checks them.
if [[ $parts == *" two-gpus "* ]]; then
  build_python_package
  n=$(( $(nvidia-smi -L | wc -l) >= 2 ? 2 : 1 ))
  two=$out/two_gpus
  mkdir -p "$two"/{run_straggler,profile_straggler,run_healthy,one_of_two}
  visible=$( ((n == 2)) && echo 0,1 || echo 0)
  for job in straggler healthy; do
    flag=$([[ $job == straggler ]] && echo --straggler)
    run "ddp_run_$job" env CUDA_VISIBLE_DEVICES=$visible "$b/bin/gpuidle" run \
      --out "$two/run_$job/report.rank%r.json" --format json \
      --trace "$two/run_$job/trace.rank%r.trace.json" -- \
      torchrun --standalone --nproc-per-node=$n tests/gpu/python/ddp_job.py $flag
    "$b/bin/gpuidle" analyze --format json "$two/run_$job/"report.rank*.json \
      >"$two/run_$job/merged.json" 2>"$two/run_$job/merged.log"
    echo "ddp $job: merged from the reports: exit $?" | tee -a "$log"
  done
  "$b/bin/gpuidle" analyze --format json "$two/run_straggler/"trace.rank*.trace.json \
    >"$two/run_straggler/merged_traces.json" 2>"$two/run_straggler/merged_traces.log"
  echo "ddp straggler: merged from the traces: exit $?" | tee -a "$log"
  run ddp_profile_straggler env PYTHONPATH="$pybuild/python" CUDA_VISIBLE_DEVICES=$visible \
    torchrun --standalone --nproc-per-node=$n tests/gpu/python/ddp_job.py --straggler \
    --profile "$two/profile_straggler"
  run one_of_two env CUDA_VISIBLE_DEVICES=$visible "$b/bin/gpuidle" run \
    --out "$two/one_of_two/report.json" --format json -- \
    python3 examples/python/healthy_matmul.py --plain --steps 20
  "$b/bin/gpuidle" analyze "$two/run_straggler/"report.rank*.json >"$out/two_gpus_merged.txt" 2>&1
  python3 tests/gpu/python/check_two_gpus.py "$two" "$n" >"$out/two_gpus_checks.log" 2>&1
  echo "two-GPU checks: exit $?" | tee -a "$log"
  cat "$out/two_gpus_checks.log" | tee -a "$log"
  grep -h 'ddp_job:' "$out"/logs/ddp_*.log | tee -a "$log"
  tar czf "$out/two_gpus.tar.gz" -C "$out" two_gpus && rm -rf "$two"  # one file comes back
fi

# One Python proof of tests/gpu/python on the package built here:
#   python_proof NAME SCRIPT TABLE LABEL PATTERN [ARGS...]
# runs SCRIPT with $out/NAME as its folder (then ARGS), keeps its log and TABLE, brings the
# folder back as one tarball, and copies the log's lines that PATTERN picks into the device log.
python_proof() {
  local name=$1 script=$2 table=$3 label=$4 pattern=$5
  shift 5
  build_python_package
  PYTHONPATH=$pybuild/python timeout 540 python3 "tests/gpu/python/$script" "$out/$name" "$@" \
    >"$out/$name.log" 2>&1
  echo "$label: exit $?" | tee -a "$log"
  cp "$out/$name/$table" "$out/$table" 2>/dev/null
  tar czf "$out/$name.tar.gz" -C "$out" "$name" && rm -rf "$out/$name"  # one file comes back
  grep -E "$pattern" "$out/$name.log" | tee -a "$log"
}

# Predicted gains (issue 18): each Python scenario before and after the fix its advice names;
# the prediction must be within 20% of the measured gain (tests/gpu/python/advice_gains.py).
if [[ $parts == *" gains "* ]]; then
  python_proof gains advice_gains.py gains.md "advice gains" '^(\||FAIL|advice gains)' \
    "$b/bin/gpuidle"
fi

# Answers a user can act on (issue 31): call sites from traces and live captures, "nothing worth
# fixing" for a healthy loop against its untraced truth, a tensorboard_trace_handler directory
# (tests/gpu/python/answers.py).
if [[ $parts == *" answers "* ]]; then
  python_proof answers answers.py answers.md answers '^(PASS|FAIL|answers)' "$b/bin/gpuidle"
fi

# Busy but slow, and not alone (issue 32): NVML's readings in live reports, a second process on
# the same GPU named with its pid, and the readings' cost (tests/gpu/python/gpu_metrics.py).
if [[ $parts == *" metrics "* ]]; then
  python_proof metrics gpu_metrics.py gpu_metrics.md "gpu metrics" '^(PASS|FAIL|gpu metrics)'
fi

# GPU throughput while busy (issue 32, ask 2): CUPTI's PM sampling tells a compute-bound matmul
# from a memory-bound elementwise loop, per step too, read back from the trace, and its cost
# (tests/gpu/python/gpu_throughput.py).
if [[ $parts == *" throughput "* ]]; then
  python_proof throughput gpu_throughput.py gpu_throughput.md "gpu throughput" \
    '^(PASS|FAIL|gpu throughput|pm_sampling_probe|    )' "$b/bin/gpuidle" "$b/bin/gpuidle_pm_sampling_probe"
fi

# Not alone (issue 32, ask 3): a job's queued work waiting while a second process's kernels
# held the same GPU is sync_bound.other_process, with that process's pid
# (tests/gpu/python/shared_gpu.py).
if [[ $parts == *" shared "* ]]; then
  python_proof shared shared_gpu.py shared_gpu.md "shared gpu" '^(PASS|FAIL|shared gpu|alone|shared|other)' \
    "$b/bin/gpuidle"
fi

# Serving (issue 33): GPT-2's generate() behind http.server at low and high load, unchanged under
# `gpuidle run`: no demand against requests waiting, and the advice's batch against a batching
# server's measured requests/s (tests/gpu/python/serving_proof.py, examples/python/serving/).
if [[ $parts == *" serving "* ]]; then
  python_proof serving serving_proof.py serving.md "serving" '^(PASS|FAIL|serving|\|)' "$b/bin/gpuidle"
fi

if [[ $parts == *" sampled "* ]]; then
  build_python_package
  mkdir -p "$out/python/sampled"
  PYTHONPATH=$pybuild/python timeout 300 python3 tests/gpu/python/sampled_collection.py \
    --out "$out/python/sampled" >"$out/sampled.md" 2>"$out/logs/sampled.stderr.log"
  echo "sampled collection: exit $?" | tee -a "$log"
  grep -E '^(FAIL|sampled collection:)' "$out/sampled.md" | tee -a "$log"
fi

# The Python package's overhead (needs the package that `python` built on this machine).
if [[ $parts == *" python-overhead "* ]]; then
  build_python_package
  PYTHONPATH=/tmp/gpuidle-pybuild/python OUT=$out/logs/torch_overhead \
    GPUIDLE_BARE_CUPTI=$b/lib/libgpuidle_bare_cupti.so API_MODES=${API_MODES-} \
    PY_VARIANTS=${PY_VARIANTS-} LEAVE_OUTS=${LEAVE_OUTS-} PY_CONFIGS=${PY_CONFIGS-} \
    tests/benchmarks/python/run_torch_overhead.sh "${PY_REPEATS:-5}" >"$out/torch_overhead.log" 2>&1
  echo "torch overhead benchmark: exit $?" | tee -a "$log"
  tail -n 12 "$out/torch_overhead.log"
  # The host-stack sampler's share: gpuidle again with sampling off (GPUIDLE_HOST_SAMPLE_MS=0).
  GPUIDLE_HOST_SAMPLE_MS=0 PYTHONPATH=/tmp/gpuidle-pybuild/python \
    OUT=$out/logs/torch_overhead_no_sampler PY_CONFIGS="tiny_mlp gpuidle" \
    tests/benchmarks/python/run_torch_overhead.sh "${PY_REPEATS:-5}" \
    >"$out/torch_overhead_no_sampler.log" 2>&1
  echo "torch overhead benchmark, sampler off: exit $?" | tee -a "$log"
  tail -n 6 "$out/torch_overhead_no_sampler.log"
fi

# Issue 15's benchmark: each workload x profiler in its own process, untraced and traced rounds
# alternating, each timed around the whole profile (run_profile_overhead.sh says which
# variables choose what). LEAVE_OUTS rows need the collector's probes: a second build of the
# package with them. No process starts after PO_BUDGET_S (what is left of ~470 s of this call).
if [[ $parts == *" profile-overhead "* ]]; then
  build_python_package
  probe_path=
  if [[ -n ${LEAVE_OUTS:-} && ${PY_PROBES:-} == 1 ]]; then
    probe_path=$pybuild/python
  elif [[ -n ${LEAVE_OUTS:-} ]]; then
    { cmake -S . -B /tmp/gpuidle-pybuild-probes -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
        -DGPUIDLE_BUILD_TESTS=OFF -DGPUIDLE_BUILD_EXAMPLES=OFF -DGPUIDLE_COLLECTOR_PROBES=ON \
        -DPython3_EXECUTABLE="$py" "${zlib[@]}" &&
      cmake --build /tmp/gpuidle-pybuild-probes -j "$(nproc)"; } >>"$out/logs/python_probe_build.log" 2>&1
    echo "python package build with probes: exit $?" | tee -a "$log"
    probe_path=/tmp/gpuidle-pybuild-probes/python
  fi
  po_budget=$((470 - SECONDS))
  PYTHONPATH=$pybuild/python PROBE_PYTHONPATH=$probe_path OUT=$out/logs/profile_overhead \
    GPUIDLE_BARE_CUPTI=$b/lib/libgpuidle_bare_cupti.so WORKLOADS=${WORKLOADS-} \
    PROFILERS=${PROFILERS-} LEAVE_OUTS=${LEAVE_OUTS-} LEAVE_OUT_WORKLOADS=${LEAVE_OUT_WORKLOADS-} \
    PO_ROUNDS=${PO_ROUNDS-} PO_STEPS=${PO_STEPS-} PO_WINDOW=${PO_WINDOW-} \
    PO_DURATION=${PO_DURATION-} PO_COMPARE_FULL=${PO_COMPARE_FULL-} PO_BUDGET_S=${PO_BUDGET_S:-$((po_budget > 60 ? po_budget : 60))} \
    tests/benchmarks/python/run_profile_overhead.sh "${PO_REPEATS:-1}" >"$out/profile_overhead.log" 2>&1
  echo "profile overhead benchmark: exit $?" | tee -a "$log"
  sed -n '/^wall time/,$p' "$out/profile_overhead.log"
fi

# `observer` (issue 26): does the report describe the program as it runs without gpuidle? Each
# workload in a process of its own (tests/benchmarks/python/observer.py): untraced rounds and one
# traced profile in the same process; reported idle per step against the untraced step time
# minus the busy time per step. OBSERVER_FULL, OBSERVER_SAMPLED, OBSERVER_LEAVE_OUTS
# ("workload:part,part ..."), OBSERVER_RECORDED (workloads also run with as_recorded=True),
# OBSERVER_FIX ("workload:fixed_workload ...": the advice's predicted gain against the fix's
# untraced gain, observer.py --fix), OBSERVER_AFTER (profilers: what each leaves behind after it
# stops, tests/benchmarks/python/after_profile.py) and OBSERVER_TRAINER=1 (the transformers
# Trainer, unchanged, under gpuidle run) pick the runs; no process starts after
# OBSERVER_BUDGET_S (default 480 s of the call).
if [[ $parts == *" observer "* ]]; then
  build_python_package
  ob=$out/logs/observer
  mkdir -p "$ob"
  obudget=${OBSERVER_BUDGET_S:-480}
  lscpu | grep -E '^(Model name|Thread|Core|Socket|CPU\(s\))' | sed 's/^/lscpu: /' | tee -a "$log"
  pin=()
  [[ $(nproc) -ge 8 ]] && command -v taskset >/dev/null && pin=(taskset -c 2-7)
  observe() {  # LABEL ARGS...: one process
    local label=$1
    shift
    if ((SECONDS > obudget)); then echo "observer: budget spent, $label not run" | tee -a "$log"; return; fi
    PYTHONPATH=$pybuild/python "${pin[@]}" timeout 150 python3 tests/benchmarks/python/observer.py \
      --label "$label" --out "$ob" "$@" >"$ob/$label.log" 2>&1
    echo "observer $label: exit $? $(grep '^result' "$ob/$label.log" | tail -1)" | tee -a "$log"
  }
  # OBSERVER_REPEAT: processes per full workload (labels w.full, w.full2, ...), for the spread.
  for ((rep = 1; rep <= ${OBSERVER_REPEAT:-1}; rep++)); do
    suffix=$((rep > 1 ? rep : 0)); suffix=${suffix#0}
    for w in ${OBSERVER_FULL-resnet50 gpt2 tiny_mlp dataloader item_sync}; do observe "$w.full$suffix" --workload "$w"; done
  done
  for w in ${OBSERVER_RECORDED-}; do observe "$w.recorded" --workload "$w" --as-recorded; done
  for w in ${OBSERVER_SAMPLED-}; do
    observe "$w.sampled" --workload "$w" --sample "${OBSERVER_WINDOW:-1/3}" --duration "${OBSERVER_DURATION:-10}" --profiles 1
  done
  for spec in ${OBSERVER_FIX-}; do
    observe "${spec%%:*}.fix" --workload "${spec%%:*}" --fix "${spec#*:}"
    grep '^gain' "$ob/${spec%%:*}.fix.log" | tee -a "$log"
  done
  for p in ${OBSERVER_AFTER-}; do
    if ((SECONDS > obudget)); then echo "observer: budget spent, after-$p not run" | tee -a "$log"; continue; fi
    PYTHONPATH=$pybuild/python "${pin[@]}" timeout 150 python3 tests/benchmarks/python/after_profile.py \
      --profiler "$p" >"$ob/after.$p.log" 2>&1
    echo "after $p: exit $? $(grep '^result' "$ob/after.$p.log" | tail -1)" | tee -a "$log"
  done
  for spec in ${OBSERVER_LEAVE_OUTS-}; do
    observe "${spec%%:*}.without-${spec#*:}" --workload "${spec%%:*}" --leave-out "${spec#*:}"
  done
  if [[ ${OBSERVER_TRAINER:-} == 1 ]] && ((SECONDS < obudget)); then
    # The Trainer's own timing, untraced: the difference of two runs' train() wall times over
    # their difference in steps takes its start-up out.
    tp=examples/python/unchanged/trainer_gpt2.py
    for n in 100 400; do
      UNCHANGED_STEPS=$n "${pin[@]}" timeout 150 python3 $tp >"$ob/trainer.untraced.$n.log" 2>&1
    done
    UNCHANGED_STEPS=400 PYTHONPATH=$pybuild/python "${pin[@]}" timeout 200 python3 -m gpuidle run \
      --out "$ob/trainer.run.report.json" --format json -- python3 $tp >"$ob/trainer.run.log" 2>&1
    echo "observer trainer: exit $? $(grep -h 'steps in' "$ob"/trainer.*.log | tr '\n' ' ')" | tee -a "$log"
  fi
  command -v perf >/dev/null && echo "perf: $(perf --version 2>&1)" | tee -a "$log" || echo "perf: none" | tee -a "$log"
fi

# `round3` (issue 27): unchanged programs that show allocator stalls (empty_cache every step,
# with and without expandable_segments, and the loop without the call, untraced, for the
# predicted gain), graph capture (by hand, and torch.compile's reduce-overhead), and
# torch.profiler traces that end mid-step, hold no GPU activity, or hold torch.compile's
# compilation (issue 28). Under `gpuidle run` with a trace each; the torch.profiler traces are
# read with `gpuidle analyze`. Everything lands in $out/round3/ (reports, traces, text, logs).
if [[ $parts == *" round3 "* ]]; then
  build_python_package
  r3=$out/round3
  mkdir -p "$r3"
  gi=$pybuild
  export LD_LIBRARY_PATH=$gi/lib:$LD_LIBRARY_PATH
  prog=examples/python/unchanged
  r3run() {  # NAME COMMAND...: one run, its output in NAME.log
    local name=$1
    shift
    timeout 150 "$@" >"$r3/$name.log" 2>&1
    echo "round3 $name: exit $? $(grep -v '^gpuidle' "$r3/$name.log" | tail -1)" | tee -a "$log"
  }
  traced() {  # NAME PROGRAM [ENV...]: under gpuidle run, with a trace and the text beside it
    local name=$1 program=$2
    shift 2
    r3run "$name" env "$@" TORCHINDUCTOR_CACHE_DIR=/tmp/r3cache/$name/inductor \
      TRITON_CACHE_DIR=/tmp/r3cache/$name/triton "$gi/bin/gpuidle" run \
      --out "$r3/$name.report.json" --format json --trace "$r3/$name.trace.json" -- \
      python3 "$prog/$program"
    "$gi/bin/gpuidle" analyze "$r3/$name.trace.json" >"$r3/$name.report.txt" 2>&1
  }
  traced empty_cache empty_cache_every_step.py
  traced empty_cache_expandable empty_cache_every_step.py PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True
  for k in 1 2; do
    r3run "empty_cache_untraced$k" python3 "$prog/empty_cache_every_step.py"
    r3run "empty_cache_fixed_untraced$k" env UNCHANGED_EMPTY_CACHE=0 python3 "$prog/empty_cache_every_step.py"
  done
  traced graph_capture cuda_graph_capture.py
  traced reduce_overhead torch_compile_reduce_overhead.py
  for m in schedule stop_mid_step cpu_only compile; do
    r3run "profiler_$m" python3 "$prog/torch_profiler_traces.py" "$m" "$r3/profiler_$m.json"
    "$gi/bin/gpuidle" analyze "$r3/profiler_$m.json" >"$r3/profiler_$m.report.txt" 2>&1
    "$gi/bin/gpuidle" analyze --format json --out "$r3/profiler_$m.report.json" \
      "$r3/profiler_$m.json" >/dev/null 2>&1
  done
  gzip -f "$r3"/*.trace.json "$r3"/profiler_{schedule,stop_mid_step,cpu_only,compile}.json
  rm -rf /tmp/r3cache
  for f in "$r3"/*.report.txt; do
    echo "== $(basename "$f")"
    grep -E 'warning|idle|allocator|graph_capture|graph capture|sync_bound|launch_bound|data_starved|steps' "$f" | head -14
  done | tee -a "$log"
fi

# `leave-out` (issue 26, part 1): where a profile's cost goes, part by part, every variant in
# one process (tests/benchmarks/python/leave_out.py). LEAVE_OUT_WORKLOADS, LEAVE_OUT_VARIANTS
# and LEAVE_OUT_REPEATS choose; collector parts (-other-kinds, -call-timing) need PY_PROBES=1.
# No process starts after LEAVE_OUT_BUDGET_S (default 300 s of the call).
if [[ $parts == *" leave-out "* ]]; then
  build_python_package
  lo=$out/logs/leave_out
  mkdir -p "$lo"
  lbudget=${LEAVE_OUT_BUDGET_S:-300}
  pin=()
  [[ $(nproc) -ge 8 ]] && command -v taskset >/dev/null && pin=(taskset -c 2-7)
  for w in ${LEAVE_OUT_WORKLOADS-tiny_mlp gpt2 resnet50}; do
    if ((SECONDS > lbudget)); then echo "leave-out: budget spent, $w not run" | tee -a "$log"; continue; fi
    PYTHONPATH=$pybuild/python GPUIDLE_BARE_CUPTI=$b/lib/libgpuidle_bare_cupti.so "${pin[@]}" \
      timeout 200 python3 tests/benchmarks/python/leave_out.py --workload "$w" \
      ${LEAVE_OUT_VARIANTS:+--variants "$LEAVE_OUT_VARIANTS"} --repeats "${LEAVE_OUT_REPEATS:-4}" \
      >"$lo/$w.log" 2>&1
    echo "leave-out $w: exit $?" | tee -a "$log"
    grep '^result' "$lo/$w.log" | tee -a "$log"
  done
fi

# `periodic` (issue 28): periodic host work under gpuidle run, each mode once untraced (the
# program's own timing of the work is the truth) and once traced with a trace kept
# (examples/python/unchanged/periodic_host_work.py); then a 20 s job sampled 2 s of every 30 s,
# whose report must state its coverage (item 2).
if [[ $parts == *" periodic "* ]]; then
  build_python_package
  pd=$out/logs/periodic
  mkdir -p "$pd"
  gi=$pybuild
  export LD_LIBRARY_PATH=$gi/lib:$LD_LIBRARY_PATH
  for m in checkpoint evaluate logging; do
    timeout 150 python3 examples/python/unchanged/periodic_host_work.py --mode "$m" \
      >"$pd/$m.untraced.log" 2>&1
    echo "periodic $m untraced: exit $? $(tail -1 "$pd/$m.untraced.log")" | tee -a "$log"
    timeout 150 "$gi/bin/gpuidle" run --out "$pd/$m.report.json" --format json \
      --trace "$pd/$m.trace.json" -- python3 examples/python/unchanged/periodic_host_work.py \
      --mode "$m" >"$pd/$m.log" 2>&1
    echo "periodic $m traced: exit $? $(grep -v '^gpuidle' "$pd/$m.log" | tail -1)" | tee -a "$log"
    "$gi/bin/gpuidle" analyze "$pd/$m.trace.json" >"$pd/$m.report.txt" 2>&1
    grep -E "idle|host|sync|checkpoint|evaluat|logging" "$pd/$m.report.txt" | head -12 | tee -a "$log"
  done
  timeout 100 "$gi/bin/gpuidle" run --sample 2/30 --out "$pd/sampled.report.txt" -- python3 \
    examples/python/tiny_mlp_launch_bound.py --plain --steps 6000 >"$pd/sampled.log" 2>&1
  echo "periodic sampled: exit $?" | tee -a "$log"
  grep -E "sampled|window" "$pd/sampled.report.txt" | head -3 | tee -a "$log"
  gzip -f "$pd"/*.trace.json
fi

# `where-time-goes` (issue 26, part 1): a wall-clock stack sampler on the program's thread
# during leave_out's visits (tests/benchmarks/python/where_time_goes.py): us per step by object
# and function, a variant against the floor. WHERE_WORKLOADS, WHERE_VARIANTS, WHERE_REPEATS.
if [[ $parts == *" where-time-goes "* ]]; then
  build_python_package
  wt=$out/logs/where_time_goes
  mkdir -p "$wt"
  for w in ${WHERE_WORKLOADS-tiny_mlp}; do
    PYTHONPATH=$pybuild/python GPUIDLE_BARE_CUPTI=$b/lib/libgpuidle_bare_cupti.so \
      GPUIDLE_WALL_SAMPLER=$b/lib/libgpuidle_wall_sampler.so \
      timeout 280 python3 tests/benchmarks/python/where_time_goes.py --workload "$w" \
      ${WHERE_VARIANTS:+--variants "$WHERE_VARIANTS"} --repeats "${WHERE_REPEATS:-20}" \
      --samples "/tmp/$w.samples" >"$wt/$w.log" 2>&1
    echo "where-time-goes $w: exit $?" | tee -a "$log"
  done
fi

# The Python package stands alone: pip wheel / pip install into a clean folder, imported with no
# staged library on any path (tests/gpu/python/check_standalone_package.sh).
if [[ $parts == *" package "* ]]; then
  OUT=$out PYTHON=$py timeout 500 tests/gpu/python/check_standalone_package.sh 2>&1 |
    tee "$out/standalone_package.log" | tail -n 15 | tee -a "$log"
fi

# Real-client programs profiled with no change to their code (examples/python/unchanged/*.py,
# issue 12): each under `gpuidle run` (report and trace), two of them also under
# `python -m gpuidle run` and LD_PRELOAD. The programs never import gpuidle. gpuidle's binary
# and library are those of the package's build: `gpuidle run` and the preloaded library find
# gpuidle's Python layer (the package's _site/sitecustomize.py) from the library's place, and a
# build tree's lib/ has the package beside it; the bundle's has none (UNCHANGED_PREFIX=$b runs
# the bundle's, without the Python layer). That lib/ comes first on LD_LIBRARY_PATH, so that the
# package's module links the very libgpuidle.so that is injected (one copy per process); the
# package is on PYTHONPATH for `python -m gpuidle`. Every compiler cache (Inductor, Triton,
# CuPy) is a fresh folder per run, so that each run compiles from scratch, as on a new machine.
# One device call: the runs stop being started once UNCHANGED_BUDGET_S (default 480 s) of the
# part have passed; `gpuidle run` of every program comes first.
if [[ $parts == *" unchanged "* ]]; then
  ustart=$SECONDS
  budget=${UNCHANGED_BUDGET_S:-480}
  build_python_package
  gi=${UNCHANGED_PREFIX:-$pybuild}
  export LD_LIBRARY_PATH=$gi/lib:$LD_LIBRARY_PATH
  prog_dir=examples/python/unchanged
  ureports=$out/reports/unchanged
  utraces=$out/traces/unchanged
  ucache=/tmp/gpuidle-unchanged-cache
  rm -rf "$ureports" "$utraces" "$ucache"
  mkdir -p "$ureports" "$utraces" "$ucache"
  export PYTHONPATH=$pybuild/python${PYTHONPATH:+:$PYTHONPATH}
  # No network on the machine: the Hugging Face libraries must not try it.
  export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 HF_DATASETS_OFFLINE=1
  # One run of one program one way: its output in logs/unchanged.PROGRAM.WAY.log, its exit
  # status and wall time in .status beside it (check_unchanged.py reads both).
  urun() {
    local program=$1 way=$2
    shift 2
    local name=unchanged.$program.$way
    local left=$((budget - (SECONDS - ustart)))
    if ((left < 30)); then
      echo "exit=skipped wall_s=0" >"$out/logs/$name.status"
      echo "$name: skipped (the part's ${budget} s are spent)" | tee -a "$log"
      return 0
    fi
    local limit=$((left < 150 ? left : 150)) cache=$ucache/$program.$way t0=$SECONDS
    mkdir -p "$cache"
    TORCHINDUCTOR_CACHE_DIR=$cache/inductor TRITON_CACHE_DIR=$cache/triton \
      CUPY_CACHE_DIR=$cache/cupy timeout "$limit" "$@" >"$out/logs/$name.log" 2>&1
    local rc=$?
    echo "exit=$rc wall_s=$((SECONDS - t0))" >"$out/logs/$name.status"
    echo "$name: exit $rc, $((SECONDS - t0)) s" | tee -a "$log"
  }
  programs=(trainer_gpt2 lightning_slow_collate jax_host_read jax_op_by_op cupy_tiny_kernels
            torch_compile_default torch_compile_reduce_overhead)
  for p in "${programs[@]}"; do
    urun "$p" run "$gi/bin/gpuidle" run --out "$ureports/$p.run.json" --format json \
      --trace "$utraces/$p.trace.json" -- python3 "$prog_dir/$p.py"
  done
  for p in trainer_gpt2 lightning_slow_collate; do
    urun "$p" pym python3 -m gpuidle run --out "$ureports/$p.pym.json" --format json -- \
      python3 "$prog_dir/$p.py"
    urun "$p" preload env LD_PRELOAD="$gi/lib/libgpuidle.so" GPUIDLE_OUT="$ureports/$p.preload.json" \
      GPUIDLE_FORMAT=json python3 "$prog_dir/$p.py"
  done
  urun jax_host_read pym python3 -m gpuidle run --out "$ureports/jax_host_read.pym.json" \
    --format json -- python3 "$prog_dir/jax_host_read.py"
  # Each program's last line, then the table.
  for f in "$out"/logs/unchanged.*.log; do
    echo "$(basename "$f" .log): $(grep -E '^[a-z0-9_]+: [0-9]+ steps in ' "$f" | tail -1)"
  done | tee -a "$log"
  python3 tests/gpu/python/check_unchanged.py "$out" "$gi/bin/gpuidle" | tee "$out/unchanged_table.md"
  echo "unchanged: $((SECONDS - ustart)) s" | tee -a "$log"
  rm -rf "$ucache"
fi

# The fault matrix's GPU rows (docs/RELIABILITY.md): tests/gpu/faults/run_faults.sh compiles the
# fault programs with nvcc and runs each row through gpuidle run, LD_PRELOAD and gpuidle.profile(),
# every step with its own time limit and none started after FAULTS_BUDGET_S (default 270 s); then
# tests/gpu/faults/check_faults.py prints one PASS/FAIL/SKIP line per row, also kept in
# $out/faults_table.md. The steps' folders travel in results.tar.gz (logs/faults/).
if [[ $parts == *" faults "* ]]; then
  fstart=$SECONDS
  build_python_package
  FAULTS_PREFIX=${FAULTS_PREFIX:-$b} FAULTS_PACKAGE=$pybuild timeout 420 \
    tests/gpu/faults/run_faults.sh "$out/logs/faults" >"$out/logs/faults_steps.log" 2>&1
  echo "fault matrix steps: exit $?, $((SECONDS - fstart)) s" | tee -a "$log"
  timeout 60 python3 tests/gpu/faults/check_faults.py "$out/logs/faults" | tee "$out/faults_table.md" |
    tee -a "$log"
fi

# At most 8 files come back from the device: everything else travels in one archive (traces
# gzipped: they become the replay data of tests/data/traces/live).
rm -f "$out"/traces/*.api.trace.json "$out"/traces/*.preload.trace.json  # read back above
gzip -f "$out"/traces/*.json "$out"/traces/unchanged/*.json 2>/dev/null
mkdir -p "$out/python"
tar -C "$out" -czf "$out/results.tar.gz" reports traces logs fork python
rm -rf "$out/reports" "$out/traces" "$out/logs" "$out/fork" "$out/python"
ls -l "$out"
