#!/usr/bin/env bash
# The fault matrix's GPU rows (docs/RELIABILITY.md): builds the fault programs with nvcc, runs
# them through the ways in (gpuidle run, LD_PRELOAD, gpuidle.profile()) and leaves one folder per
# step, OUT_DIR/STEP/, with out, err, status ("exit=N wall_s=S") and the step's reports, for
# check_faults.py. The `faults` part of tests/gpu/run_on_device.sh calls it:
#
#   FAULTS_PREFIX=DIR          bin/gpuidle and lib/libgpuidle.so (the device bundle)
#   FAULTS_PACKAGE=DIR         the Python package's build (bin/, lib/, python/); optional: the
#                              steps that need it say "no-package" without it
#   FAULTS_BUDGET_S=270        no step starts after this many seconds ("skipped")
#   FAULTS_JOBS=4              independent steps run this many at a time
#   FAULTS_CUDA_ARCH=sm_90     the GPU to compile for (H200)
#   tests/gpu/faults/run_faults.sh OUT_DIR
#
# Every step has its own time limit and runs with SIGINT, SIGQUIT, SIGTERM and SIGHUP at their
# defaults (a background job would inherit SIGINT ignored, and the exit rows need it).
set -uo pipefail
fo=${1:?usage: run_faults.sh OUT_DIR}
here=$(cd "$(dirname "$0")" && pwd)
prefix=${FAULTS_PREFIX:?FAULTS_PREFIX must name the folder with bin/gpuidle and lib/libgpuidle.so}
pkg=${FAULTS_PACKAGE:-}
budget=${FAULTS_BUDGET_S:-270}
jobs_max=${FAULTS_JOBS:-4}
arch=${FAULTS_CUDA_ARCH:-sm_90}
start=$SECONDS
mkdir -p "$fo"
fo=$(cd "$fo" && pwd)
fx=$fo/bin
G=$prefix/bin/gpuidle
L=$prefix/lib/libgpuidle.so
FP=$fx/fault_program
FPC=$fx/fault_program_cupti
TORCH=$here/torch_faults.py

# step NAME LIMIT_S COMMAND...: runs COMMAND in $fo/NAME/ and records how it ended.
step() {
  local name=$1 limit=$2
  shift 2
  local d=$fo/$name
  mkdir -p "$d"
  if ((SECONDS - start > budget)); then
    echo "exit=skipped wall_s=0" >"$d/status"
    echo "$name: skipped (the ${budget} s are spent)"
    return 0
  fi
  local t0=$SECONDS
  (cd "$d" && ulimit -c 0 && exec timeout -k 5 "$limit" env --default-signal=INT,QUIT,TERM,HUP \
    "$@") >"$d/out" 2>"$d/err" </dev/null
  local rc=$?
  echo "exit=$rc wall_s=$((SECONDS - t0))" >"$d/status"
  echo "$name: exit $rc, $((SECONDS - t0)) s"
}

# step, in the background, at most FAULTS_JOBS at a time.
pstep() {
  while (($(jobs -rp | wc -l) >= jobs_max)); do wait -n; done
  step "$@" &
}

# A step that cannot be set up here: its status says why, the checker prints SKIP or FAIL.
unrunnable() {
  mkdir -p "$fo/$1"
  echo "exit=$2 wall_s=0" >"$fo/$1/status"
  echo "$1: $2"
}

# --- the programs ---------------------------------------------------------------------------------
mkdir -p "$fx"
nv=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
cuda=$(cd "$(dirname "$(readlink -f "$nv")")/.." && pwd)
flags=(-O2 -std=c++17 -arch="$arch" -Xcompiler=-Wall)
"$nv" "${flags[@]}" -o "$FP" "$here/fault_program.cu" >"$fo/compile.log" 2>&1 &
"$nv" "${flags[@]}" -DGPUIDLE_FAULT_CUPTI_CLIENT -I"$cuda/extras/CUPTI/include" -o "$FPC" \
  "$here/fault_program.cu" \
  -L"$cuda/lib64" -L"$cuda/extras/CUPTI/lib64" -lcupti -Xlinker -rpath="$cuda/lib64" \
  -Xlinker -rpath="$cuda/extras/CUPTI/lib64" >"$fo/compile_cupti.log" 2>&1 &
wait
echo "compiled: $(ls "$fx" | tr '\n' ' ')($((SECONDS - start)) s)"
# The program's output without gpuidle, for the settings rows.
step cxx.reference 60 "$FP" plain 1000

# --- activity buffers: alone on the machine, so that nothing else changes their pace --------------
step cxx.tiny_buffers.baseline 120 "$G" run --out report.json --format json -- \
  "$FP" burst 8 25000 1000 200
step cxx.tiny_buffers.run 120 "$G" run --buffer-mb 1 --out report.json --format json -- \
  "$FP" burst 8 25000 1000 200
step cxx.record_limit.run 60 "$G" run --max-records 5000 --out report.json --format json -- \
  "$FP" threads 8 5000

# --- exits: gpuidle run and LD_PRELOAD ------------------------------------------------------------
for kind in normal exit _exit throw sigterm sigint sighup sigquit; do
  pstep "cxx.exit.$kind.run" 60 "$G" run --out report.json --format json -- "$FP" exit "$kind"
  pstep "cxx.exit.$kind.preload" 60 env LD_PRELOAD="$L" GPUIDLE_OUT=report.json \
    GPUIDLE_FORMAT=json "$FP" exit "$kind"
done

# SIGTERM sent to gpuidle run (kill, timeout, a batch scheduler): forwarded to the program. With
# `group`, to the whole process group, as SLURM and Kubernetes do: the program gets it twice
# (from the group and forwarded).
forwarded_sigterm() {
  local name=cxx.exit.forwarded_sigterm$1.run
  local d=$fo/$name t0=$SECONDS
  mkdir -p "$d"
  (cd "$d" && ulimit -c 0 && exec setsid env --default-signal=INT,QUIT,TERM,HUP "$G" run \
    --out report.json --format json -- "$FP" exit wait) >"$d/out" 2>"$d/err" </dev/null &
  local pid=$! i
  for i in $(seq 100); do
    grep -q ready "$d/out" 2>/dev/null && break
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.2
  done
  if [[ $1 == .group ]]; then kill -TERM -- "-$pid" 2>/dev/null; else kill -TERM "$pid" 2>/dev/null; fi
  for i in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
  kill -KILL -- "-$pid" 2>/dev/null
  wait "$pid"
  local rc=$?
  echo "exit=$rc wall_s=$((SECONDS - t0))" >"$d/status"
  echo "$name: exit $rc, $((SECONDS - t0)) s"
}
forwarded_sigterm "" &
forwarded_sigterm .group &

# --- 8 threads at once, cudaDeviceReset, CUDA graphs, fork ----------------------------------------
for way in run preload; do
  if [[ $way == run ]]; then
    in=("$G" run --out report.json --format json --)
    fork_in=("$G" run --out report.%p.json --format json --)
    fixed_in=("$G" run --out report.json --format json --)
  else
    in=(env LD_PRELOAD="$L" GPUIDLE_OUT=report.json GPUIDLE_FORMAT=json)
    fork_in=(env LD_PRELOAD="$L" GPUIDLE_OUT=report.%p.json GPUIDLE_FORMAT=json)
    fixed_in=(env LD_PRELOAD="$L" GPUIDLE_OUT=report.json GPUIDLE_FORMAT=json)
  fi
  pstep "cxx.threads.$way" 90 "${in[@]}" "$FP" threads 8 5000
  pstep "cxx.reset.$way" 90 "${in[@]}" "$FP" reset 2000
  pstep "cxx.graph.$way" 90 "${in[@]}" "$FP" graph 200 50
  pstep "cxx.fork_noexec.$way" 90 "${fork_in[@]}" "$FP" fork-noexec
  # One name for both processes: the second to finish must not replace the first's report.
  pstep "cxx.fork_exec.$way" 90 "${fixed_in[@]}" "$FP" fork-exec
done

# --- another CUPTI client in the process, before and after gpuidle --------------------------------
for order in first after; do
  pstep "cxx.cupti_client_$order.run" 90 "$G" run --out report.json --format json -- \
    "$FPC" cupti-client "$order"
done

# --- settings, on a real GPU: one warning at most, the program unharmed ---------------------------
zlib=$(ls /lib/x86_64-linux-gnu/libz.so.1 /usr/lib/x86_64-linux-gnu/libz.so.1 2>/dev/null | head -1)
preload=(env LD_PRELOAD="$L" GPUIDLE_OUT=report.json GPUIDLE_FORMAT=json)
pstep cxx.env.buffer_mb_junk 60 "${preload[@]}" GPUIDLE_BUFFER_MB=lots "$FP" plain 1000
pstep cxx.env.format_xml 60 "${preload[@]}" GPUIDLE_FORMAT=xml "$FP" plain 1000
pstep cxx.env.launch_gap_zero 60 "${preload[@]}" GPUIDLE_LAUNCH_GAP_MAX_US=0 "$FP" plain 1000
pstep cxx.env.skip_steps_too_many 60 "${preload[@]}" GPUIDLE_SKIP_STEPS=1000 "$FP" plain 1000
pstep cxx.env.cupti_path_missing 60 "${preload[@]}" GPUIDLE_CUPTI_PATH=/nonexistent/libcupti.so.13 \
  "$FP" plain 1000
pstep cxx.env.cupti_path_not_cupti 60 "${preload[@]}" GPUIDLE_CUPTI_PATH="$zlib" "$FP" plain 1000
pstep cxx.env.bench_junk 60 "${preload[@]}" GPUIDLE_BENCH_LEAVE_OUT=bogus "$FP" plain 1000
echo "not a shared library" >"$fx/not_a_library.so"
pstep cxx.run.library_not_elf 60 env GPUIDLE_LIBRARY="$fx/not_a_library.so" "$G" run \
  --out report.json --format json -- "$FP" plain 1000

# --- no driver (its library replaced by one that is not), no GPU visible --------------------------
mkdir -p "$fx/nodriver"
ln -sf "$zlib" "$fx/nodriver/libcuda.so.1"
nodriver=(env LD_LIBRARY_PATH="$fx/nodriver:${LD_LIBRARY_PATH:-}")
nogpu=(env CUDA_VISIBLE_DEVICES=)
for row in nodriver nogpu; do
  declare -n with=$row
  pstep "cxx.$row.plain" 60 "${with[@]}" "$FP" plain 100
  pstep "cxx.$row.run" 60 "${with[@]}" "$G" run --out report.json --format json -- "$FP" plain 100
  pstep "cxx.$row.preload" 60 "${with[@]}" LD_PRELOAD="$L" GPUIDLE_OUT=report.json "$FP" plain 100
  unset -n with
done

# --- libcupti missing: its folders hidden in a private mount namespace ----------------------------
cupti_dirs=()
for f in "$(ldconfig -p 2>/dev/null | awk '/libcupti\.so\.13 /{print $NF; exit}')" \
  "$cuda/lib64/libcupti.so.13" "$cuda/extras/CUPTI/lib64/libcupti.so.13"; do
  [[ -n $f && -e $f ]] && cupti_dirs+=("$(dirname "$(readlink -f "$f")")")
done
mapfile -t cupti_dirs < <(printf '%s\n' "${cupti_dirs[@]}" | sort -u)
mkdir -p "$fx/empty"
if ((${#cupti_dirs[@]} > 0)) && unshare -rm /bin/true 2>/dev/null; then
  pstep cxx.nocupti.preload 60 unshare -rm /bin/sh -c \
    'e=$1; shift; while [ "$1" != -- ]; do mount --bind "$e" "$1"; shift; done; shift; exec "$@"' \
    sh "$fx/empty" "${cupti_dirs[@]}" -- env LD_PRELOAD="$L" GPUIDLE_OUT=report.json \
    "$FP" plain 1000
else
  unrunnable cxx.nocupti.preload setup-refused
fi

# --- PyTorch: exits, torch.profiler, DataLoader workers, fork and exec ----------------------------
havepkg=0
[[ -n $pkg && -x $pkg/bin/gpuidle && -d $pkg/python/gpuidle ]] && havepkg=1
pyenv=(env LD_LIBRARY_PATH="$pkg/lib:${LD_LIBRARY_PATH:-}" PYTHONPATH="$pkg/python")
for kind in normal sys_exit os_exit raise sigterm sigint; do
  # With the package, gpuidle run gives the program gpuidle's Python layer (its exit handler
  # writes the report on Ctrl-C); the bundle's gpuidle alone has none.
  if ((havepkg)); then
    pstep "py.exit.$kind.run" 120 "${pyenv[@]}" "$pkg/bin/gpuidle" run --out report.json \
      --format json -- python3 "$TORCH" exit "$kind"
  else
    pstep "py.exit.$kind.run" 120 "$G" run --out report.json --format json -- \
      python3 "$TORCH" exit "$kind"
  fi
  if ((havepkg)); then
    pstep "py.exit.$kind.profile" 120 "${pyenv[@]}" GPUIDLE_OUT=report.json GPUIDLE_FORMAT=json \
      python3 "$TORCH" exit "$kind" --profile
  else
    unrunnable "py.exit.$kind.profile" no-package
  fi
done
for order in gpuidle-first profiler-first; do
  # The bundle's library has no Python package beside it: gpuidle run without its Python layer.
  pstep "py.coexist.$order.nopython" 120 "$G" run --out report.json --format json -- \
    python3 "$TORCH" coexist "$order"
  if ((havepkg)); then
    pstep "py.coexist.$order.run" 120 "${pyenv[@]}" "$pkg/bin/gpuidle" run --out report.json \
      --format json -- python3 "$TORCH" coexist "$order"
  else
    unrunnable "py.coexist.$order.run" no-package
  fi
done
pstep py.fork4.preload 150 env LD_PRELOAD="$L" GPUIDLE_OUT=report.%p.json GPUIDLE_FORMAT=json \
  python3 "$here/fork_workers4.py"
pstep py.fork4.run 150 "$G" run --out report.%p.json --format json -- \
  python3 "$here/fork_workers4.py"
pstep py.fork_exec.preload 150 env LD_PRELOAD="$L" GPUIDLE_OUT=report.%p.json GPUIDLE_FORMAT=json \
  python3 "$TORCH" fork-exec

wait
rm -rf "$fx"  # the programs: rebuilt each time, no need to carry them back
echo "faults: $((SECONDS - start)) s"
