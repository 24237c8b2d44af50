#!/usr/bin/env bash
# The Python package's overhead targets (issue 4), on a GPU machine with torch:
#   tiny-MLP training loop under gpuidle.profile(): at most 1.10x its untraced step time, with
#   torch.profiler on the same loop reported beside it; a healthy loop: under 1% slower.
#
#   tests/benchmarks/python/run_torch_overhead.sh [REPEATS]     (PYTHONPATH must find gpuidle)
#
# Each process times untraced steps, then the same steps under one profiler (torch_overhead.py),
# so the ratio of the two is free of process-to-process noise; the processes of the
# configurations run interleaved, REPEATS (5) times each, and the table shows the medians.
# "bare" is the floor: CUPTI recording kernels only (libgpuidle_bare_cupti.so, found through
# GPUIDLE_BARE_CUPTI or the library path). API_MODES adds gpuidle configurations that record the
# launch calls another way (GPUIDLE_BENCH_API_RECORDS: kinds, ids, auto), for comparison;
# PY_VARIANTS ("nosites nohooks") gpuidle without a part of the Python package (torch_overhead.py);
# LEAVE_OUTS collector parts left out (GPUIDLE_BENCH_LEAVE_OUT, ../overhead/probe_settings.cc), one
# configuration per word. PY_ALTERNATE=C runs REPEATS processes that each time bare and gpuidle
# in turn for C cycles (torch_overhead.py --alternate: both detach after their turn), so that
# their comparison is free of process-to-process noise; the default configurations are then
# left out unless PY_CONFIGS names some.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repeats=${1:-5}
python=${PYTHON:-python3}
out=${OUT:-$(mktemp -d /tmp/gpuidle-torch-overhead.XXXXXX)}
mkdir -p "$out"
log=$out/torch_overhead.log
: >"$log"
pin=()
if [[ $(nproc) -ge 8 ]] && command -v taskset >/dev/null; then pin=(taskset -c 2-5); fi
{
  date -u '+date: %Y-%m-%d %H:%M UTC'
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | sed 's/^/gpu: /'
  "$python" -c 'import torch, gpuidle; print("torch", torch.__version__, "gpuidle", gpuidle.__version__)'
  echo "repeats: $repeats  pinned: ${pin[*]:-no}"
} | tee -a "$log"

configs=("tiny_mlp gpuidle" "tiny_mlp torch" "tiny_mlp bare" "healthy gpuidle")
((${PY_ALTERNATE:-0} > 0)) && configs=()
# PY_CONFIGS replaces the list ("LOOP PROFILER" pairs, comma-separated).
[[ -n ${PY_CONFIGS:-} ]] && IFS=, read -r -a configs <<<"$PY_CONFIGS"
for m in ${API_MODES:-}; do configs+=("tiny_mlp gpuidle@$m"); done
for v in ${PY_VARIANTS:-}; do configs+=("tiny_mlp gpuidle-$v"); done
for p in ${LEAVE_OUTS:-}; do configs+=("tiny_mlp gpuidle%$p"); done
declare -A ratios=() untraced=() traced=()
for ((r = 1; r <= repeats; ++r)); do
  for c in "${configs[@]}"; do
    set -- $c
    api= leave_out=
    [[ $2 == *@* ]] && api=${2#*@}
    [[ $2 == *%* ]] && leave_out=${2#*%}
    line=$(GPUIDLE_BENCH_API_RECORDS="$api" GPUIDLE_BENCH_LEAVE_OUT="$leave_out" "${pin[@]}" \
      "$python" "$here/torch_overhead.py" --loop "$1" --profiler "${2%%[@%]*}" 2>>"$log" |
      grep '^result')
    echo "run $r: ${line:-$c failed}" | tee -a "$log"
    [[ -n $line ]] || continue
    ratios[$c]+="$(sed 's/.*ratio=\([0-9.]*\).*/\1/' <<<"$line")"$'\n'
    untraced[$c]+="$(sed 's/.*untraced_ms=\([0-9.]*\).*/\1/' <<<"$line")"$'\n'
    traced[$c]+="$(sed 's/.*traced_ms=\([0-9.]*\) .*/\1/' <<<"$line")"$'\n'
  done
done

alternating_bare= alternating_gpuidle=
for ((r = 1; r <= repeats && ${PY_ALTERNATE:-0} > 0; ++r)); do
  lines=$("${pin[@]}" "$python" "$here/torch_overhead.py" --loop tiny_mlp --alternate "$PY_ALTERNATE" \
    --steps 30 2>>"$log")
  printf '%s\n' "$lines" | sed "s/^/alternating run $r: /" | tee -a "$log"
  grep -q '^result' <<<"$lines" || continue
  alternating_bare+=$(sed -n 's/^cycle .*bare_ratio=\([0-9.]*\).*/\1/p' <<<"$lines")$'\n'
  alternating_gpuidle+=$(sed -n 's/^cycle .*gpuidle_ratio=\([0-9.]*\).*/\1/p' <<<"$lines")$'\n'
done

median() {
  sort -g | awk '{v[NR] = $1} END {
    if (NR == 0) { print "n/a"; exit }
    if (NR % 2) print v[(NR + 1) / 2]; else printf "%.4f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
verdict() { awk -v r="$1" -v t="$2" 'BEGIN { if (r == "n/a") print "n/a"; else print (r + 0 <= t ? "PASS" : "FAIL") }'; }
{
  echo
  echo "median step time (ms) and median per-process ratio, $repeats interleaved processes each"
  printf '%-10s %-9s %12s %12s %8s\n' loop profiler untraced_ms traced_ms ratio
  for c in "${configs[@]}"; do
    set -- $c
    printf '%-10s %-9s %12s %12s %8s\n' "$1" "$2" "$(printf '%s' "${untraced[$c]:-}" | median)" \
      "$(printf '%s' "${traced[$c]:-}" | median)" "$(printf '%s' "${ratios[$c]:-}" | median)"
  done
  tg=$(printf '%s' "${ratios[tiny_mlp gpuidle]:-}" | median)
  tt=$(printf '%s' "${ratios[tiny_mlp torch]:-}" | median)
  tb=$(printf '%s' "${ratios[tiny_mlp bare]:-}" | median)
  hg=$(printf '%s' "${ratios[healthy gpuidle]:-}" | median)
  echo
  echo "tiny MLP under gpuidle: ${tg}x untraced (target <= 1.10): $(verdict "$tg" 1.10);" \
    "under torch.profiler: ${tt}x; CUPTI recording kernels only: ${tb}x"
  echo "healthy loop under gpuidle: ${hg}x (target < 1.01): $(verdict "$hg" 1.0099)"
  if [[ -n $alternating_bare ]]; then
    echo "tiny MLP, bare and gpuidle in turn in one process ($repeats processes x" \
      "$PY_ALTERNATE cycles, medians of the turns' ratios): CUPTI recording kernels only" \
      "$(printf '%s' "$alternating_bare" | median)x, gpuidle" \
      "$(printf '%s' "$alternating_gpuidle" | median)x untraced"
  fi
} | tee -a "$log"
