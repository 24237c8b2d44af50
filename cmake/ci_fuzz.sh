#!/usr/bin/env bash
# The fuzz pass of CI (issue 13): builds the libFuzzer harnesses of tests/fuzz with clang
# (ASan + UBSan, every layer instrumented) into build-fuzz, then runs each on the committed
# corpus for a short time, two at a time. Fails on any crash, leak, sanitizer finding or failed
# check, and names the input that caused it.
#
#   cmake/ci_fuzz.sh                           40 s per fuzzer, after the build
#   GPUIDLE_FUZZ_SECONDS=600 cmake/ci_fuzz.sh  a longer search
#   GPUIDLE_FUZZ_ONLY=gzip_fuzzer cmake/ci_fuzz.sh
#
# Installs what is missing with apt (clang, as cmake/quickstart.sh does the rest). New inputs
# the fuzzers find go to build-fuzz/fuzz/, never into the repository.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
seconds=${GPUIDLE_FUZZ_SECONDS:-40}
# A slow input is a finding (issue 29's complexity budget): every harness's work is linear or
# n log n in its input of at most 64 KiB, milliseconds even under ASan, so an input still running
# after this long (two fuzzers sharing two loaded cores) is a superlinear loop, and fails the pass.
slow_input_seconds=${GPUIDLE_FUZZ_SLOW_INPUT_SECONDS:-5}
fuzzers=(${GPUIDLE_FUZZ_ONLY:-kineto_json_fuzzer gzip_fuzzer gpuidle_trace_fuzzer options_fuzzer
          analyze_fuzzer report_json_fuzzer})

packages=(clang cmake ninja-build pkg-config zlib1g-dev libabsl-dev rapidjson-dev
          libgtest-dev libgmock-dev)
cmake/install_packages.sh "${packages[@]}"

jobs=$(nproc 2>/dev/null || echo 2)
# -O1 without -DNDEBUG: RapidJSON's and the library's assertions stay on.
flags="-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined"
flags+=" -fno-omit-frame-pointer -fsanitize-ignorelist=$root/tests/fuzz/ubsan_ignorelist.txt"
CC=clang CXX=clang++ cmake -S . -B build-fuzz -G Ninja -DGPUIDLE_FUZZ=ON \
  -DGPUIDLE_BUILD_EXAMPLES=OFF -DGPUIDLE_BUILD_PYTHON=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g" -DCMAKE_CXX_FLAGS="$flags" >/dev/null
cmake --build build-fuzz --target gpuidle_fuzzers -j "$jobs"

# One fuzzer: the committed corpus and seeds are read, new inputs written under build-fuzz.
run() {
  # Absolute paths: options_fuzzer works in a scratch directory of its own.
  local f=$1 work=$root/build-fuzz/fuzz/$1
  mkdir -p "$work/new" "$work/artifacts"
  local dict=()
  [ "$f" = options_fuzzer ] || dict=(-dict="$root/tests/fuzz/trace.dict")
  local dirs=("$work/new")
  for d in "$root"/tests/fuzz/corpus/$f "$root"/tests/fuzz/seeds/$f; do
    [ -d "$d" ] && dirs+=("$d")
  done
  if "$root"/build-fuzz/bin/"$f" "${dirs[@]}" "${dict[@]}" -max_total_time="$seconds" -max_len=65536 \
       -timeout="$slow_input_seconds" -rss_limit_mb=2560 -artifact_prefix="$work/artifacts/" \
       -print_final_stats=1 >"$work/log.txt" 2>&1; then
    echo "ci_fuzz: $f clean: $(grep -m1 -o 'stat::number_of_executed_units: *[0-9]*' \
      "$work/log.txt" | grep -o '[0-9]*$') runs in ${seconds}s"
  else
    echo "ci_fuzz: $f FAILED; log $work/log.txt, input $(ls "$work"/artifacts/* 2>/dev/null | head -1)"
    grep -E "ERROR|fuzz check failed|runtime error|SUMMARY" "$work/log.txt" | head -5
    return 1
  fi
}

# Two at a time on two cores; a failure of either fails the pass.
status=0
for ((i = 0; i < ${#fuzzers[@]}; i += 2)); do
  pids=()
  for f in "${fuzzers[@]:i:2}"; do
    run "$f" &
    pids+=($!)
  done
  for pid in "${pids[@]}"; do wait "$pid" || status=1; done
done
exit $status
