#!/usr/bin/env bash
# Tracing overhead on a GPU machine: how much time gpuidle adds to a program, next to the least
# a CUPTI kernel tracer adds (libgpuidle_bare_cupti.so) and to the untraced program.
#
#   tests/benchmarks/overhead/run_overhead_benchmark.sh BUILD_DIR [REPEATS]
#
# For each workload of gpuidle_bench_overhead (tiny: 20,000 empty kernels; healthy: 200 queued
# 2 ms kernels) it runs REPEATS (7) interleaved rounds of untraced / bare CUPTI / gpuidle, so
# that drifts in clock speed or machine load hit every configuration alike, and takes the
# median of the per-process medians. The targets:
#   tiny:    gpuidle's added time <= 1.25x the bare collector's added time
#   healthy: gpuidle < 1% slower than untraced
# Logs go to $OUT (or a temporary folder); the table is printed last. A configuration that
# cannot run (gpuidle's injection not built yet, say) shows n/a.
#
# Environment:
#   MODES     workloads to run process against process (default "tiny healthy"; "" for none)
#   PAIRED    processes of the in-process measurement of the tiny workload (default REPEATS;
#             0: none): each times untraced rounds, then switches its tracer on (bare, or
#             gpuidle through the C++ API, with each VARIANTS entry too), then off again
#             (gpuidle_bench_overhead --pair) and reports added = traced - untraced and
#             leftover = after - untraced; the ratio of the medians over processes is the
#             tiny-kernel verdict, as process-to-process noise does not enter it
#   VARIANTS  diagnostics for the tiny workload: each word is a comma list of collector parts
#             gpuidle leaves out (GPUIDLE_BENCH_LEAVE_OUT: runtime, driver, other-kinds, decode,
#             subscriber, system-thread-ids, flush-period, detach, and one kind at a time:
#             memcpy-records, memset-records, sync-records, event-records, device-records;
#             and the timed calls' own work: call-timing, cupti-clock;
#             probe_settings.cc beside this script), run as one more configuration, so
#             that the price of each part shows beside the rest (default: none). VARIANTS and
#             API_MODES need a bundle with probes (PROBES=1 tests/gpu/make_device_bundle.sh)
#   API_MODES more in-process configurations of gpuidle, one per word: how it records the
#             launch and sync calls (GPUIDLE_BENCH_API_RECORDS: callbacks, the default; kinds,
#             ids, auto: CUPTI's activity records), beside the default (default: none)
#   ALTERNATE cycles of the alternating measurement of the tiny workload (default 0: none),
#             which then replaces the in-process one above, in PAIRED processes per gpuidle
#             configuration (the default, each VARIANTS and API_MODES entry): bare and that
#             configuration take turns in each process, each detached after its turn
#             (gpuidle_bench_overhead --alternate); the ratio of the median added times over
#             all cycles of all processes is each configuration's verdict; beside it, the
#             ratio over the steady cycles only (untraced rounds before both turns within 5%)
#   TIMED_BARE  1: one more alternating configuration, gpuidle against a bare collector that
#             also times every launch call in CUPTI's callbacks (GPUIDLE_BARE_TIMES_LAUNCHES):
#             the least that recording launch calls costs, which gpuidle must do
#   ROUNDS    timed rounds per phase of the in-process measurements (default: the benchmark's,
#             15)
#   BENCH_CPUS  CPUs every run is pinned to with taskset (default 2-5 where there are at least
#             8, else unpinned): the launching thread then cannot wander between cores and
#             clock domains, which made unpinned runs differ by up to 30%
set -uo pipefail

if [[ $# -lt 1 || ! -d $1 ]]; then
  echo "usage: $0 BUILD_DIR [REPEATS]" >&2
  exit 2
fi
build=$(cd "$1" && pwd)
repeats=${2:-7}
out=${OUT:-$(mktemp -d /tmp/gpuidle-overhead.XXXXXX)}
mkdir -p "$out"
log="$out/overhead.log"
: >"$log"

bench="$build/bin/gpuidle_bench_overhead"
bare_lib="$build/lib/libgpuidle_bare_cupti.so"
gpuidle_lib="$build/lib/libgpuidle.so"
if [[ ! -x $bench ]]; then
  echo "no $bench: build the target gpuidle_bench_overhead first" >&2
  exit 1
fi

# A library can serve as CUDA_INJECTION64_PATH only if it exports InitializeInjection.
injectable() {
  [[ -f $1 ]] || return 1
  command -v nm >/dev/null || return 0
  nm -D --defined-only "$1" 2>/dev/null | grep -qw InitializeInjection
}
configs=(untraced)
if injectable "$bare_lib"; then
  configs+=(bare)
else
  echo "bare CUPTI collector not built: $bare_lib" | tee -a "$log"
fi
if injectable "$gpuidle_lib"; then
  configs+=(gpuidle)
else
  echo "gpuidle injection not available: $gpuidle_lib" | tee -a "$log"
fi

{
  date -u '+date: %Y-%m-%d %H:%M UTC'
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | sed 's/^/gpu: /'
  echo "build: $build  repeats: $repeats  configs: ${configs[*]}"
} | tee -a "$log"

pin=()
cpus=${BENCH_CPUS-}
if [[ -z ${BENCH_CPUS+set} && $(nproc) -ge 8 ]]; then cpus=2-5; fi
if [[ -n $cpus ]] && command -v taskset >/dev/null; then pin=(taskset -c "$cpus"); fi
echo "pinned to CPUs: ${cpus:-no}" | tee -a "$log"
"${pin[@]}" "$bench" --clock-probe 2>&1 | tee -a "$log"

# Runs one configuration once; prints its median_ms, or nothing if the run failed.
# Configurations: untraced, bare, gpuidle, and gpuidle-PARTS (PARTS left out).
run_once() {
  local mode=$1 config=$2 run_log leave_out=${2#gpuidle}
  leave_out=${leave_out#-}
  run_log="$out/$mode.$config.$3.log"
  case $config in
    untraced) "${pin[@]}" "$bench" --mode "$mode" >"$run_log" 2>&1 ;;
    bare) CUDA_INJECTION64_PATH="$bare_lib" "${pin[@]}" "$bench" --mode "$mode" >"$run_log" 2>&1 ;;
    # The report goes to a file so that the log shows gpuidle really collected; it is written
    # at exit, after the timed rounds.
    gpuidle*)
      CUDA_INJECTION64_PATH="$gpuidle_lib" GPUIDLE_QUIET=1 \
        GPUIDLE_BENCH_LEAVE_OUT="$leave_out" \
        GPUIDLE_OUT="$out/$mode.$config.$3.report.json" "${pin[@]}" "$bench" --mode "$mode" \
        >"$run_log" 2>&1 ;;
  esac
  local rc=$?
  cat "$run_log" >>"$log"
  [[ $rc -eq 0 ]] || { echo "$mode/$config run $3 failed (exit $rc)" >>"$log"; return; }
  # A collector that did not collect would make tracing look free.
  if [[ $config == bare ]] && ! grep -q '^bare_cupti: [1-9][0-9]* kernel records' "$run_log"; then
    echo "$mode/bare run $3 recorded no kernels" >>"$log"
    return
  fi
  sed -n 's/^result .*median_ms=\([0-9.]*\).*/\1/p' "$run_log"
}

median() {
  sort -g | awk '{v[NR] = $1} END {
    if (NR == 0) { print "n/a"; exit }
    if (NR % 2) print v[(NR + 1) / 2]; else printf "%.3f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# Runs the tiny workload in one process (measurement paired or alternating, run R) under an
# in-process configuration: bare, gpuidle, gpuidle:PARTS (PARTS left out), gpuidle@MODE (API
# records), gpuidle^timed-bare (the bare collector also times launches). Keeps the output in
# RUN_LOG and the overall log; fails, saying why there, if the run failed or recorded nothing.
run_in_process() {
  local measurement=$1 config=$2 r=$3 run_log=$4 variant= api= timed_bare=0
  shift 4
  [[ $config == *:* ]] && variant=${config#*:}
  [[ $config == *@* ]] && api=${config#*@}
  [[ $config == *^timed-bare ]] && timed_bare=1
  GPUIDLE_QUIET=1 GPUIDLE_BENCH_LEAVE_OUT="$variant" GPUIDLE_BENCH_API_RECORDS="$api" \
    GPUIDLE_BARE_TIMES_LAUNCHES=$timed_bare \
    "${pin[@]}" "$bench" --mode tiny "${rounds_flag[@]}" "$@" >"$run_log" 2>&1
  local rc=$?
  cat "$run_log" >>"$log"
  local why=
  if ((rc != 0)); then
    why="failed (exit $rc)"
  elif ! grep -q '^result .*records=[1-9]' "$run_log"; then
    why="recorded nothing"
  elif ((timed_bare)) && ! grep -q '^result .*bare_launch_calls=[1-9]' "$run_log"; then
    why="the bare collector timed no launch"
  fi
  [[ -z $why ]] || { echo "$measurement $config run $r $why" >>"$log"; return 1; }
}

# In-process: untraced, traced, untraced again. Prints "added_ms leftover_ms".
run_pair() {
  local config=$1 r=$2 run_log="$out/paired.${1//[:@]/-}.$2.log"
  run_in_process paired "$config" "$r" "$run_log" --pair "${config%%[:@]*}" || return
  sed -n 's/^result .*added_ms=\([-0-9.]*\) leftover_ms=\([-0-9.]*\).*/\1 \2/p' "$run_log"
}

declare -A paired=() leftover=()
paired_rounds=${PAIRED:-$repeats}
rounds_flag=()
[[ -n ${ROUNDS:-} ]] && rounds_flag=(--rounds "$ROUNDS")
pair_configs=(bare gpuidle)
for v in ${VARIANTS:-}; do pair_configs+=("gpuidle:$v"); done
for m in ${API_MODES:-}; do pair_configs+=("gpuidle@$m"); done
if ((paired_rounds > 0 && ${ALTERNATE:-0} == 0)) &&
  [[ " ${configs[*]} " == *" gpuidle "* && " ${configs[*]} " == *" bare "* ]]; then
  for ((r = 1; r <= paired_rounds; ++r)); do
    for config in "${pair_configs[@]}"; do
      value=$(run_pair "$config" "$r")
      echo "paired $config run $r: added, leftover ${value:-failed} ms" | tee -a "$log"
      [[ -n $value ]] && paired[$config]+="${value% *}"$'\n' && leftover[$config]+="${value#* }"$'\n'
    done
  done
fi

# Bare and one gpuidle configuration (as in run_pair) in turn inside one process. Prints
# "bare_added_ms gpuidle_added_ms untraced_before_bare_ms untraced_before_gpuidle_ms" per cycle.
run_alternating() {
  local config=$1 r=$2 run_log="$out/alternating.${1//[:@^]/-}.$2.log"
  run_in_process alternating "$config" "$r" "$run_log" --alternate "$ALTERNATE" || return
  sed -n 's/^cycle .*bare_added_ms=\([-0-9.]*\) gpuidle_added_ms=\([-0-9.]*\) untraced_before_ms=\([-0-9.]*\),\([-0-9.]*\).*/\1 \2 \3 \4/p' "$run_log"
}

# A steady cycle: the untraced rounds before the two turns agree within 5%. In the others a
# clock change or other load moved the baseline during the cycle (seen on the H200 machine as
# untraced rounds of 64 and 99 ms in one process).
steady_cycle() {
  awk -v a="$1" -v b="$2" 'BEGIN { m = a < b ? a : b; d = a > b ? a - b : b - a; exit !(m > 0 && d / m < 0.05) }'
}

declare -A alternating_bare=() alternating_gpuidle=() steady_bare=() steady_gpuidle=()
[[ ${TIMED_BARE:-0} == 1 && ${ALTERNATE:-0} -gt 0 ]] && pair_configs+=("gpuidle^timed-bare")
if ((${ALTERNATE:-0} > 0 && paired_rounds > 0)); then
  for ((r = 1; r <= paired_rounds; ++r)); do
    for config in "${pair_configs[@]:1}"; do
      cycles=$(run_alternating "$config" "$r")
      echo "alternating $config run $r: $(grep -c . <<<"${cycles:-}") of $ALTERNATE cycles" | tee -a "$log"
      while read -r b g ub ug; do
        [[ -n $b ]] || continue
        alternating_bare[$config]+="$b"$'\n'
        alternating_gpuidle[$config]+="$g"$'\n'
        if steady_cycle "$ub" "$ug"; then
          steady_bare[$config]+="$b"$'\n'
          steady_gpuidle[$config]+="$g"$'\n'
        fi
      done <<<"${cycles:-}"
    done
  done
fi

variant_configs=()
if [[ " ${configs[*]} " == *" gpuidle "* && " ${MODES-tiny healthy} " == *" tiny "* ]]; then
  for v in ${VARIANTS:-}; do variant_configs+=("gpuidle-$v"); done
fi

declare -A result
gpuidle_runs=0  # process-against-process runs of gpuidle, each of which writes a report
for mode in ${MODES-tiny healthy}; do
  declare -A samples=()
  mode_configs=("${configs[@]}")
  [[ $mode == tiny ]] && mode_configs+=("${variant_configs[@]}")
  for ((r = 1; r <= repeats; ++r)); do
    for config in "${mode_configs[@]}"; do
      value=$(run_once "$mode" "$config" "$r")
      [[ $config == gpuidle* ]] && ((++gpuidle_runs))
      echo "$mode $config run $r: ${value:-failed} ms" | tee -a "$log"
      [[ -n $value ]] && samples[$config]+="$value"$'\n'
    done
  done
  for config in untraced bare gpuidle "${variant_configs[@]}"; do
    result[$mode.$config]=$(printf '%s' "${samples[$config]:-}" | median)
  done
  unset samples
done

# "n/a" wherever an input is missing; awk does the arithmetic.
calc() {
  local expr=$1
  shift
  for value in "$@"; do [[ $value == n/a ]] && { echo n/a; return; }; done
  awk -v a="$1" -v b="${2:-0}" -v c="${3:-0}" "BEGIN { $expr }"
}

tu=${result[tiny.untraced]:-n/a} tb=${result[tiny.bare]:-n/a} tg=${result[tiny.gpuidle]:-n/a}

hu=${result[healthy.untraced]:-n/a} hb=${result[healthy.bare]:-n/a} hg=${result[healthy.gpuidle]:-n/a}
tiny_bare_added=$(calc 'printf "%.3f", b - a' "$tu" "$tb")
tiny_gpuidle_added=$(calc 'printf "%.3f", b - a' "$tu" "$tg")
tiny_ratio=$(calc 'if (b - a <= 0) print "n/a"; else printf "%.2f", (c - a) / (b - a)' \
  "$tu" "$tb" "$tg")
tiny_verdict=$(calc 'print (a + 0 <= 1.25 ? "PASS" : "FAIL")' "$tiny_ratio")
healthy_bare_pct=$(calc 'printf "%+.2f%%", (b - a) / a * 100' "$hu" "$hb")
healthy_gpuidle_pct=$(calc 'printf "%+.2f%%", (b - a) / a * 100' "$hu" "$hg")
healthy_verdict=$(calc 'print ((b - a) / a * 100 < 1 ? "PASS" : "FAIL")' "$hu" "$hg")
reports=$(find "$out" -maxdepth 1 -name '*.gpuidle*.report.json' | wc -l)
pb=$(printf '%s' "${paired[bare]:-}" | median)
pg=$(printf '%s' "${paired[gpuidle]:-}" | median)
paired_ratio=$(calc 'if (a <= 0) print "n/a"; else printf "%.2f", b / a' "$pb" "$pg")
paired_verdict=$(calc 'print (a + 0 <= 1.25 ? "PASS" : "FAIL")' "$paired_ratio")

{
  echo
  echo "median wall time per round (ms), $repeats interleaved runs each"
  printf '%-9s %10s %10s %10s\n' mode untraced bare_cupti gpuidle
  printf '%-9s %10s %10s %10s\n' tiny "$tu" "$tb" "$tg"
  printf '%-9s %10s %10s %10s\n' healthy "$hu" "$hb" "$hg"
  echo
  echo "tiny (20,000 empty kernels): added ms bare $tiny_bare_added, gpuidle $tiny_gpuidle_added;" \
    "gpuidle/bare = $tiny_ratio (target <= 1.25): $tiny_verdict"
  for config in "${variant_configs[@]}"; do
    v=${result[tiny.$config]:-n/a}
    echo "  leaving out ${config#gpuidle-}: median $v ms, added" \
      "$(calc 'printf "%.3f", b - a' "$tu" "$v") ms, /bare =" \
      "$(calc 'if (b - a <= 0) print "n/a"; else printf "%.2f", (c - a) / (b - a)' "$tu" "$tb" "$v")"
  done
  if ((paired_rounds > 0 && ${ALTERNATE:-0} == 0)); then
    echo
    echo "in one process (untraced rounds, then traced, then untraced again; median over" \
      "$paired_rounds processes of each one's medians, ms per 20,000 kernels):"
    echo "tiny in-process: added ms bare $pb, gpuidle $pg; gpuidle/bare = $paired_ratio" \
      "(target <= 1.25): $paired_verdict"
    echo "  left over after stopping: bare $(printf '%s' "${leftover[bare]:-}" | median) ms," \
      "gpuidle $(printf '%s' "${leftover[gpuidle]:-}" | median) ms"
    for config in "${pair_configs[@]:2}"; do
      v=$(printf '%s' "${paired[$config]:-}" | median)
      label="leaving out ${config#*:}"
      [[ $config == *@* ]] && label="API records ${config#*@}"
      echo "  $label: added $v ms, /bare =" \
        "$(calc 'if (a <= 0) print "n/a"; else printf "%.2f", b / a' "$pb" "$v")," \
        "left over $(printf '%s' "${leftover[$config]:-}" | median) ms"
    done
  fi
  if ((${ALTERNATE:-0} > 0 && paired_rounds > 0)); then
    echo
    echo "both tracers in turn in one process ($paired_rounds processes x $ALTERNATE cycles per" \
      "configuration, each tracer detached after its turn; medians over all cycles, ms per" \
      "20,000 kernels):"
    for config in "${pair_configs[@]:1}"; do
      ab=$(printf '%s' "${alternating_bare[$config]:-}" | median)
      ag=$(printf '%s' "${alternating_gpuidle[$config]:-}" | median)
      ar=$(calc 'if (a <= 0) print "n/a"; else printf "%.2f", b / a' "$ab" "$ag")
      cycles=$(printf '%s' "${alternating_gpuidle[$config]:-}" | grep -c .)
      sb=$(printf '%s' "${steady_bare[$config]:-}" | median)
      sg=$(printf '%s' "${steady_gpuidle[$config]:-}" | median)
      sr=$(calc 'if (a <= 0) print "n/a"; else printf "%.2f", b / a' "$sb" "$sg")
      steady="steady cycles $(printf '%s' "${steady_gpuidle[$config]:-}" | grep -c .): $sr"
      if [[ $config == gpuidle ]]; then
        echo "tiny alternating: added ms bare $ab, gpuidle $ag; gpuidle/bare = $ar" \
          "(target <= 1.25): $(calc 'print (a + 0 <= 1.25 ? "PASS" : "FAIL")' "$ar"); $cycles cycles;" \
          "$steady"
      else
        label="leaving out ${config#*:}"
        [[ $config == *@* ]] && label="API records ${config#*@}"
        [[ $config == *^timed-bare ]] && label="against a bare collector that also times launches"
        echo "  $label: added ms bare $ab, gpuidle $ag; /bare = $ar; $cycles cycles; $steady"
      fi
    done
  fi
  echo "healthy (200 x 2 ms kernels): slowdown bare $healthy_bare_pct, gpuidle" \
    "$healthy_gpuidle_pct (target < 1%): $healthy_verdict"
  echo "gpuidle reports written: $reports of $gpuidle_runs runs (fewer: gpuidle may not have" \
    "collected, check the logs); logs: $out"
} | tee -a "$log"
