#!/usr/bin/env bash
# The parse benchmark of docs/PERFORMANCE.md: `gpuidle analyze` on a few-hundred-MB PyTorch
# profiler trace against Python's json.load of the same file, measured side by side in one run.
#
#   tests/benchmarks/run_parse_benchmark.sh [--rounds N] [--size-mb N] [--build-dir DIR]
#                                           [--work-dir DIR] [--keep] [--compare GPUIDLE]
#
# 1. builds gpuidle and make_big_trace (cmake --build);
# 2. makes a trace of --size-mb MB (default 300) from the recorded H200 traces in tests/data,
#    as trace.json and trace.json.gz, in a temporary directory;
# 3. runs, for --rounds rounds (default 5), interleaved and in a rotating order:
#      json.load      /usr/bin/python3 -c 'import json,sys; json.load(open(sys.argv[1]))' trace.json
#      gz+json.load   the same through gzip.open, on trace.json.gz
#      gpuidle json   gpuidle analyze --quiet trace.json
#      gpuidle gz     gpuidle analyze --quiet trace.json.gz
#    each under /usr/bin/time -f '%e %M' (wall seconds, peak RSS in KB); with --compare, also
#    another gpuidle binary (e.g. one built before a change) on both files, for information;
# 4. prints the medians, the ratios gpuidle / baseline of the same run, peak RSS / file size,
#    and exits 1 if a target is missed:
#      time:   gpuidle <= 0.25 x its baseline (json.load for .json, gzip + json.load for .gz)
#      memory: peak RSS <= size of the trace (the JSON; for .json.gz its uncompressed size)
#    Exit 2: the benchmark could not run.
#
# Needs cmake, a C++20 compiler, /usr/bin/python3 and GNU time (/usr/bin/time; on Debian
# `apt-get install -y time`, which the script does itself when it runs as root). Takes a few
# minutes on a 2-core machine; the trace files need about 350 MB in the work directory.
set -euo pipefail

ROUNDS=5
SIZE_MB=300
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
BUILD_DIR="$ROOT/build"
WORK_PARENT="${TMPDIR:-/tmp}"
KEEP=0
COMPARE=""
COMMAND_LINE="tests/benchmarks/run_parse_benchmark.sh $*"

usage() { sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'; exit 2; }
while [[ $# -gt 0 ]]; do
  case "$1" in
    --rounds) ROUNDS="$2"; shift 2 ;;
    --size-mb) SIZE_MB="$2"; shift 2 ;;
    --build-dir) BUILD_DIR="$(realpath -m "$2")"; shift 2 ;;
    --work-dir) WORK_PARENT="$2"; shift 2 ;;
    --keep) KEEP=1; shift ;;
    --compare) COMPARE="$(realpath "$2")"; shift 2 ;;
    -h|--help) usage ;;
    *) echo "unknown argument: $1" >&2; usage ;;
  esac
done
[[ "$ROUNDS" =~ ^[1-9][0-9]*$ ]] || { echo "--rounds must be a positive integer" >&2; exit 2; }

die() { echo "run_parse_benchmark: $*" >&2; exit 2; }
log() { echo "[$(date +%H:%M:%S)] $*" >&2; }

PYTHON=/usr/bin/python3
[[ -x "$PYTHON" ]] || die "$PYTHON not found (the baseline is the system Python's json.load)"
if [[ ! -x /usr/bin/time ]]; then
  if [[ $(id -u) -eq 0 ]] && command -v apt-get >/dev/null; then
    log "installing GNU time (apt-get install -y time)"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq time >/dev/null ||
      die "could not install GNU time"
  else
    die "GNU time (/usr/bin/time) is missing: apt-get install -y time"
  fi
fi

# --- build ---------------------------------------------------------------------------------
if [[ ! -f "$BUILD_DIR/CMakeCache.txt" ]]; then
  log "configuring $BUILD_DIR (Release)"
  cmake -S "$ROOT" -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release >/dev/null
elif ! grep -q make_big_trace "$BUILD_DIR/build.ninja" "$BUILD_DIR/Makefile" 2>/dev/null; then
  cmake -S "$ROOT" -B "$BUILD_DIR" >/dev/null  # a build dir configured before this folder existed
fi
log "building gpuidle and make_big_trace in $BUILD_DIR"
cmake --build "$BUILD_DIR" --target gpuidle make_big_trace >/dev/null
BUILD_TYPE="$(sed -n 's/^CMAKE_BUILD_TYPE:[A-Z]*=//p' "$BUILD_DIR/CMakeCache.txt")"

WORK="$(mktemp -d "$WORK_PARENT/gpuidle-bench.XXXXXX")"
if [[ $KEEP -eq 0 ]]; then trap 'rm -rf "$WORK"' EXIT; else log "keeping $WORK"; fi
# A private copy: a rebuild of the build tree during the run cannot change what is measured.
cp "$BUILD_DIR/bin/gpuidle" "$WORK/gpuidle"
GPUIDLE="$WORK/gpuidle"
if [[ -n "$COMPARE" ]]; then
  [[ -x "$COMPARE" ]] || die "--compare: $COMPARE is not an executable"
  cp "$COMPARE" "$WORK/gpuidle-compare"
fi

# --- the trace -----------------------------------------------------------------------------
log "generating a ${SIZE_MB} MB trace in $WORK"
"$BUILD_DIR/bin/make_big_trace" --size-mb "$SIZE_MB" --out "$WORK/trace.json" \
  --gzip-out "$WORK/trace.json.gz" 2>"$WORK/generate.log" || { cat "$WORK/generate.log" >&2; exit 2; }
GENERATED="$(cat "$WORK/generate.log")"
JSON_BYTES=$(stat -c %s "$WORK/trace.json")
GZ_BYTES=$(stat -c %s "$WORK/trace.json.gz")

# The report must be real: analyse once and keep the summary's first lines.
"$GPUIDLE" analyze "$WORK/trace.json" >"$WORK/report.txt" || die "gpuidle analyze failed"
cat "$WORK/trace.json" "$WORK/trace.json.gz" >/dev/null  # into the page cache for everyone

# --- rounds --------------------------------------------------------------------------------
NAMES=("json.load" "gz+json.load" "gpuidle_json" "gpuidle_gz")
[[ -n "$COMPARE" ]] && NAMES+=("compare_json" "compare_gz")
run_case() {  # run_case NAME -> appends "NAME round seconds kb"
  local name="$1" round="$2" cmd=()
  case "$name" in
    json.load) cmd=("$PYTHON" -c 'import json,sys; json.load(open(sys.argv[1]))' "$WORK/trace.json") ;;
    gz+json.load) cmd=("$PYTHON" -c 'import gzip,json,sys; json.load(gzip.open(sys.argv[1]))'
                      "$WORK/trace.json.gz") ;;
    gpuidle_json) cmd=("$GPUIDLE" analyze --quiet "$WORK/trace.json") ;;
    gpuidle_gz) cmd=("$GPUIDLE" analyze --quiet "$WORK/trace.json.gz") ;;
    compare_json) cmd=("$WORK/gpuidle-compare" analyze --quiet "$WORK/trace.json") ;;
    compare_gz) cmd=("$WORK/gpuidle-compare" analyze --quiet "$WORK/trace.json.gz") ;;
  esac
  /usr/bin/time -f '%e %M' -o "$WORK/time.txt" "${cmd[@]}" >/dev/null ||
    die "$name failed in round $round"
  echo "$name $round $(tail -n 1 "$WORK/time.txt")" >>"$WORK/results.txt"
}
: >"$WORK/results.txt"
for ((r = 1; r <= ROUNDS; r++)); do
  for ((i = 0; i < ${#NAMES[@]}; i++)); do  # rotate the order: no case always runs first
    name="${NAMES[$(((i + r - 1) % ${#NAMES[@]}))]}"
    log "round $r/$ROUNDS: $name"
    run_case "$name" "$r"
  done
done

# --- report --------------------------------------------------------------------------------
CPU_MODEL="$(lscpu | sed -n 's/^Model name: *//p' | sed -n 1p)"
MEM_TOTAL="$(awk '/^MemTotal/ {printf "%.1f GiB", $2 / 1048576}' /proc/meminfo)"
CORES="$(nproc)"
KERNEL="$(uname -sr)"
DATE="$(date -u '+%Y-%m-%d %H:%M:%S UTC')"
PY_VERSION="$("$PYTHON" -c 'import sys; print(sys.version.split()[0])')"
COMPILER="$(sed -n 's/^CMAKE_CXX_COMPILER:[A-Z]*=//p' "$BUILD_DIR/CMakeCache.txt")"
COMPILER_VERSION="$("$COMPILER" --version 2>/dev/null | sed -n 1p || true)"
# Read-only git queries (--no-optional-locks: status must not refresh the index).
REVISION="$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)"
if [[ -n "$(git -C "$ROOT" --no-optional-locks status --porcelain --untracked-files=no \
            2>/dev/null || true)" ]]; then
  REVISION="$REVISION (with local changes)"
fi
REPORT_HEAD="$(sed -n '1,6p' "$WORK/report.txt")"
export COMPARE ROUNDS JSON_BYTES GZ_BYTES CPU_MODEL MEM_TOTAL BUILD_TYPE COMMAND_LINE GENERATED \
  CORES KERNEL DATE PY_VERSION COMPILER_VERSION REVISION REPORT_HEAD
"$PYTHON" - "$WORK/results.txt" <<'EOF'
import os, statistics, sys

e = os.environ
runs = {}
for line in open(sys.argv[1]):
    name, rnd, secs, kb = line.split()
    runs.setdefault(name, []).append((int(rnd), float(secs), int(kb)))
med_t = {n: statistics.median(s for _, s, _ in v) for n, v in runs.items()}
med_m = {n: statistics.median(k * 1024 for _, _, k in v) for n, v in runs.items()}
json_b, gz_b = int(e["JSON_BYTES"]), int(e["GZ_BYTES"])
MB = 1e6

def per_round_ratio(a, b):
    ra = {r: s for r, s, _ in runs[a]}
    rb = {r: s for r, s, _ in runs[b]}
    q = sorted(ra[r] / rb[r] for r in ra)
    return q[0], q[-1]

print("gpuidle parse benchmark (tests/benchmarks/run_parse_benchmark.sh)")
print(f"date:      {e['DATE']}")
print(f"machine:   {e['CPU_MODEL']}, {e['CORES']} cores, {e['MEM_TOTAL']} RAM, {e['KERNEL']}")
print(f"build:     {e['BUILD_TYPE']}, {e['COMPILER_VERSION']}; revision {e['REVISION']}")
print(f"baseline:  /usr/bin/python3 {e['PY_VERSION']}")
print(f"command:   {e['COMMAND_LINE'].strip()}")
if e.get("COMPARE"):
    print(f"compare:   {e['COMPARE']}")
print(f"trace:     trace.json {json_b / MB:.1f} MB, trace.json.gz {gz_b / MB:.1f} MB "
      f"({e['GENERATED'].replace('make_big_trace: ', '')})")
print(f"rounds:    {e['ROUNDS']}, interleaved; wall time and peak RSS from /usr/bin/time")
print()
rows = [
    ("json.load", "json.load(open('trace.json'))", json_b),
    ("gz+json.load", "json.load(gzip.open('trace.json.gz'))", gz_b),
    ("gpuidle_json", "gpuidle analyze --quiet trace.json", json_b),
    ("gpuidle_gz", "gpuidle analyze --quiet trace.json.gz", gz_b),
]
if "compare_json" in runs:
    rows += [("compare_json", "(compare) analyze --quiet trace.json", json_b),
             ("compare_gz", "(compare) analyze --quiet trace.json.gz", gz_b)]
print(f"| {'command':<40} | {'median s':>8} | {'min s':>6} | {'max s':>6} "
      f"| {'peak RSS MB':>11} | {'RSS / file':>10} |")
print(f"|{'-' * 42}|{'-' * 9}:|{'-' * 7}:|{'-' * 7}:|{'-' * 12}:|{'-' * 11}:|")
for name, label, size in rows:
    secs = [s for _, s, _ in runs[name]]
    print(f"| {label:<40} | {med_t[name]:8.2f} | {min(secs):6.2f} | {max(secs):6.2f} "
          f"| {med_m[name] / MB:11.1f} | {med_m[name] / size:10.2f} |")
print()

checks = []
def check(label, value, limit, unit=""):
    ok = value <= limit
    checks.append(ok)
    print(f"{'PASS' if ok else 'FAIL'}  {label}: {value:.3f}{unit} (target <= {limit}{unit})")

lo, hi = per_round_ratio("gpuidle_json", "json.load")
check(f"time  gpuidle .json / json.load            (per round {lo:.3f}..{hi:.3f})",
      med_t["gpuidle_json"] / med_t["json.load"], 0.25)
lo, hi = per_round_ratio("gpuidle_gz", "gz+json.load")
check(f"time  gpuidle .json.gz / gzip+json.load    (per round {lo:.3f}..{hi:.3f})",
      med_t["gpuidle_gz"] / med_t["gz+json.load"], 0.25)
print(f"info  time  gpuidle .json.gz / json.load of the plain .json: "
      f"{med_t['gpuidle_gz'] / med_t['json.load']:.3f}")
check("memory  gpuidle .json peak RSS / trace.json size", med_m["gpuidle_json"] / json_b, 1.0)
check("memory  gpuidle .json.gz peak RSS / uncompressed trace size",
      med_m["gpuidle_gz"] / json_b, 1.0)
if "compare_json" in runs:
    for kind in ("json", "gz"):
        print(f"info  time  gpuidle / (compare) on .{kind if kind == 'json' else 'json.gz'}: "
              f"{med_t['gpuidle_' + kind] / med_t['compare_' + kind]:.3f}; (compare) / its baseline: "
              f"{med_t['compare_' + kind] / med_t['json.load' if kind == 'json' else 'gz+json.load']:.3f}")
print(f"info  memory  gpuidle .json.gz peak RSS / trace.json.gz size: "
      f"{med_m['gpuidle_gz'] / gz_b:.2f}; json.load peak RSS / trace.json size: "
      f"{med_m['json.load'] / json_b:.2f}")
print()
print("report (first lines of `gpuidle analyze trace.json`):")
print("\n".join("  " + l for l in e["REPORT_HEAD"].splitlines()))
print()
print("RESULT:", "all targets met" if all(checks) else "TARGET MISSED")
sys.exit(0 if all(checks) else 1)
EOF
