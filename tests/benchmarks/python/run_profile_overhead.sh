#!/usr/bin/env bash
# What one profile costs a PyTorch job, start and stop included (issue 15), on a GPU machine
# with torch, torchvision and transformers:
#
#   tests/benchmarks/python/run_profile_overhead.sh [REPEATS]   (PYTHONPATH must find gpuidle)
#
# Each configuration (a workload and a profiler) is a process of its own
# (profile_overhead.py: untraced and traced rounds alternating, each timed around the whole
# profile); the processes run interleaved, every configuration once per repeat (REPEATS: 1, so
# that the default run stays near 5 minutes of GPU time; the estimate is printed first), pinned
# to CPUs 2-5 where there are 8 or more. The table at the end shows the medians over the
# processes, and PASS/FAIL of gpuidle's full tracing against issue 15's targets (ResNet-50
# <= 1.15x, tiny MLP <= 1.30x, healthy loop <= 1.01x untraced).
#
#   WORKLOADS   tiny_mlp resnet50 gpt2 healthy
#   PROFILERS   gpuidle bare bare-timed torch gpuidle-sampled none
#   LEAVE_OUTS  one more gpuidle configuration per word, with GPUIDLE_BENCH_LEAVE_OUT=<word>
#               (../overhead/probe_settings.cc: sync-records event-records memcpy-records ...),
#               on LEAVE_OUT_WORKLOADS (default: WORKLOADS). Only a probe build honours it:
#               PROBE_PYTHONPATH names one (-DGPUIDLE_COLLECTOR_PROBES=ON) for these processes.
#   PO_ROUNDS   untraced and traced rounds per process (7)
#   PO_STEPS    steps per round instead of the workload's, "tiny_mlp=100 resnet50=8"
#   PO_WINDOW   gpuidle-sampled's sample="W/P" (1/10)
#   PO_DURATION seconds: duration mode instead (steps/s untraced, then under one profile;
#               gpuidle's idle shares by cause in the logs, its reports beside them)
#   PO_COMPARE_FULL seconds: with PO_DURATION, each gpuidle-sampled process then traces the
#               same loop in full that long and compares the cause shares (within 5 points)
#   PO_BUDGET_S no process starts after this many seconds (420), so that the table comes
#   GPUIDLE_BARE_CUPTI  libgpuidle_bare_cupti.so for bare and bare-timed
#
# Logs (one per process, and profile_overhead.log) go to $OUT (default: a new /tmp folder).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
repeats=${1:-1}
python=${PYTHON:-python3}
out=${OUT:-$(mktemp -d /tmp/gpuidle-profile-overhead.XXXXXX)}
mkdir -p "$out"
log=$out/profile_overhead.log
: >"$log"
workloads=(${WORKLOADS:-tiny_mlp resnet50 gpt2 healthy})
profilers=(${PROFILERS:-gpuidle bare bare-timed torch gpuidle-sampled none})
leave_out_workloads=(${LEAVE_OUT_WORKLOADS:-${workloads[*]}})
rounds=${PO_ROUNDS:-7}
window=${PO_WINDOW:-1/10}
duration=${PO_DURATION:-0}
budget=${PO_BUDGET_S:-420}
declare -A steps_of=()
for s in ${PO_STEPS:-}; do steps_of[${s%%=*}]=${s#*=}; done
pin=()
if [[ $(nproc) -ge 8 ]] && command -v taskset >/dev/null; then pin=(taskset -c 2-5); fi

configs=()
for w in "${workloads[@]}"; do
  for p in "${profilers[@]}"; do configs+=("$w $p"); done
done
for word in ${LEAVE_OUTS:-}; do
  for w in "${leave_out_workloads[@]}"; do configs+=("$w gpuidle%$word"); done
done

commit=${GPUIDLE_COMMIT:-$(git -C "$root" rev-parse --short HEAD 2>/dev/null || cat "$root/.devbundle/COMMIT" 2>/dev/null || echo unknown)}
{
  date -u '+date: %Y-%m-%d %H:%M UTC'
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | sed 's/^/gpu: /'
  "$python" - <<'EOF'
import importlib
parts = []
for name in ("torch", "torchvision", "transformers", "gpuidle"):
    try:
        parts.append(f"{name} {importlib.import_module(name).__version__}")
    except Exception as e:
        parts.append(f"{name} missing ({type(e).__name__})")
print("versions: " + ", ".join(parts))
EOF
  echo "commit: $commit"
  echo "repeats: $repeats  rounds: $rounds  pinned: ${pin[*]:-no}  budget: ${budget} s" \
    "${PO_DURATION:+ duration: ${duration} s}"
  [[ -n ${LEAVE_OUTS:-} ]] && echo "leave-outs: ${LEAVE_OUTS} (probe build: ${PROBE_PYTHONPATH:-NONE: GPUIDLE_BENCH_LEAVE_OUT is ignored, these rows equal gpuidle})"
  # The estimate: the plain configurations' cross product, and gpuidle once per leave-out row.
  comma() { local IFS=,; echo "$*"; }
  plan() {
    "$python" "$here/profile_overhead.py" --dry-run --rounds "$rounds" --duration "$duration" "$@" |
      sed -n 's/^estimate total=\([0-9]*\) s.*/\1/p'
  }
  main_s=$(plan --workload "$(comma "${workloads[@]}")" --profiler "$(comma "${profilers[@]}")")
  leave_s=0
  if [[ -n ${LEAVE_OUTS:-} ]]; then
    leave_s=$(( $(plan --workload "$(comma "${leave_out_workloads[@]}")" --profiler gpuidle) *
                $(wc -w <<<"$LEAVE_OUTS") ))
  fi
  echo "estimate: $(( (${main_s:-0} + leave_s) * repeats )) s for ${#configs[@]} configuration(s) x" \
    "$repeats (rough H200 guesses: workloads.py)"
} | tee -a "$log"

start=$SECONDS
declare -A ratio=() untraced=() traced=() state=()
field() { sed -n "s/.* $1=\([^ ]*\).*/\1/p" <<<"$2"; }
for ((r = 1; r <= repeats; ++r)); do
  for c in "${configs[@]}"; do
    if ((SECONDS - start > budget)); then
      echo "budget of ${budget} s spent: no more processes (run $r, from $c on)" | tee -a "$log"
      break 2
    fi
    set -- $c
    w=$1 p=${2%%%*} leave_out=
    [[ $2 == *%* ]] && leave_out=${2#*%}
    name=$w.${2//%/-}.r$r
    args=(--workload "$w" --profiler "$p" --rounds "$rounds" --window "$window")
    [[ -n ${steps_of[$w]:-} ]] && args+=(--steps "${steps_of[$w]}")
    limit=150
    if [[ $duration != 0 ]]; then
      args+=(--duration "$duration")
      [[ $p == gpuidle-sampled && -n ${PO_COMPARE_FULL:-} ]] && args+=(--compare-full "$PO_COMPARE_FULL")
      [[ $p == gpuidle* ]] && args+=(--save-report "$out/$name.report.json")
      limit=$(awk -v d="$duration" -v f="${PO_COMPARE_FULL:-0}" 'BEGIN { printf "%d", 2 * d + f + 120 }')
    fi
    pythonpath=${PYTHONPATH:-}
    [[ -n $leave_out && -n ${PROBE_PYTHONPATH:-} ]] && pythonpath=$PROBE_PYTHONPATH
    # The package's own libgpuidle.so first: a library on the path built from other sources (the
    # device bundle's) would otherwise be loaded by the module in its place.
    libpath=$LD_LIBRARY_PATH
    [[ -n $pythonpath && -d $pythonpath/../lib ]] && libpath=$(cd "$pythonpath/../lib" && pwd):$libpath
    t0=$SECONDS
    LD_LIBRARY_PATH=$libpath PYTHONPATH=$pythonpath GPUIDLE_BENCH_LEAVE_OUT=$leave_out \
      "${pin[@]}" timeout "$limit" \
      "$python" "$here/profile_overhead.py" "${args[@]}" >"$out/$name.log" 2>&1
    rc=$?
    line=$(grep '^result' "$out/$name.log" | tail -1)
    echo "run $r ($((SECONDS - t0)) s, exit $rc): ${line:-$c: no result (see $name.log: $(tail -1 "$out/$name.log" | cut -c1-200))}" |
      tee -a "$log"
    if [[ $line == *" skip="* ]]; then state[$c]=skip; continue; fi
    if [[ -z $line || $line == *" failed="* ]]; then state[$c]+=F; continue; fi
    if [[ $duration != 0 ]]; then
      untraced[$c]+="$(field untraced_steps_per_s "$line")"$'\n'
      traced[$c]+="$(field traced_steps_per_s "$line")"$'\n'
    else
      untraced[$c]+="$(field untraced_ms "$line")"$'\n'
      traced[$c]+="$(field traced_ms "$line")"$'\n'
    fi
    ratio[$c]+="$(field ratio "$line")"$'\n'
  done
done
echo "wall time: $((SECONDS - start)) s" | tee -a "$log"

median() {
  sort -g | awk 'NF {v[++n] = $1} END {
    if (n == 0) { print "n/a"; exit }
    if (n % 2) print v[(n + 1) / 2]; else printf "%.4f\n", (v[n / 2] + v[n / 2 + 1]) / 2 }'
}
declare -A target=([resnet50]=1.15 [tiny_mlp]=1.30 [healthy]=1.01)
verdict() {  # RATIO TARGET
  [[ -z $2 ]] && { echo "-"; return; }
  awk -v r="$1" -v t="$2" 'BEGIN { if (r == "n/a") print "n/a"; else print (r + 0 <= t + 0 ? "PASS" : "FAIL") }'
}
{
  echo
  if [[ $duration != 0 ]]; then
    echo "steps/s untraced and under one ${duration} s profile; ratio = untraced / traced steps/s," \
      "median of the processes ($repeats each)"
    cols=(untraced_sps traced_sps)
  else
    echo "round time (ms, whole profile included) untraced and traced, medians over the processes;" \
      "ratio: median of the processes' traced / untraced ($repeats each, $rounds rounds each)"
    cols=(untraced_ms traced_ms)
  fi
  printf '%-9s %-28s %13s %13s %8s %6s  %s\n' workload profiler "${cols[@]}" ratio procs target
  for c in "${configs[@]}"; do
    set -- $c
    n=$(printf '%s' "${ratio[$c]:-}" | grep -c .)
    rt=$(printf '%s' "${ratio[$c]:-}" | median)
    check="-"
    if [[ $2 == gpuidle && $duration == 0 ]]; then
      check="$(verdict "$rt" "${target[$1]:-}")${target[$1]:+ (<= ${target[$1]})}"
    fi
    [[ ${state[$c]:-} == skip ]] && check="skip (gpuidle without sample=)"
    [[ ${state[$c]:-} == *F* ]] && check+=" ${#state[$c]} failed"
    printf '%-9s %-28s %13s %13s %8s %6s  %s\n' "$1" "$2" \
      "$(printf '%s' "${untraced[$c]:-}" | median)" "$(printf '%s' "${traced[$c]:-}" | median)" \
      "$rt" "$n" "$check"
  done
} | tee -a "$log"
