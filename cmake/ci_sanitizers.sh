#!/usr/bin/env bash
# CI's sanitizer runs (from the repository root; .ci/run calls it after the plain tests):
#   asan  every test, C++ and Python, under AddressSanitizer + UndefinedBehaviorSanitizer
#         (build-asan, -DGPUIDLE_SANITIZE=address,undefined; leaks are findings too)
#   tsan  the tests of the code that starts threads, under ThreadSanitizer (build-tsan, =thread)
#
#   cmake/ci_sanitizers.sh [asan|tsan|all]    (default all; JOBS=n parallel jobs, default 2)
#
# Builds only what the runs need (the test programs, the CLI, libgpuidle.so, the Python module:
# no benchmarks, no examples). A finding fails its test; every stage runs, and the script exits
# non-zero if any failed. Suppressions, each with its reason: tests/sanitizers/.
#
# Not run under a sanitizer (the plain run of .ci/run covers it):
#   install_and_consume  builds programs against the installed libgpuidle.so outside this build,
#                        without the sanitizer flags; it checks the install layout and the
#                        exported symbols, which no sanitizer looks at.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
mode=${1:-all}
case "$mode" in asan|tsan|all) ;; *) echo "usage: $0 [asan|tsan|all]" >&2; exit 2 ;; esac
jobs=${JOBS:-2}
supp="$root/tests/sanitizers"
failed=()

stage() { echo "=== ci_sanitizers: $* [$(date +%T), ${SECONDS}s]"; }
# run NAME COMMAND...: runs a stage; a failure is remembered and returned, the script goes on.
# (set -e does not apply inside a command whose status is tested: the stages chain with &&.)
run() {
  local name=$1
  shift
  stage "$name"
  "$@" || { failed+=("$name"); return 1; }
}

# Every test program (tests/<layer>/<name>_test.cc, as tests/CMakeLists.txt builds them).
test_programs() { for f in tests/*/*_test.cc; do basename "$f" .cc; done; }

# build DIR SANITIZERS PROBES TARGET...
# -O1 -g1: what the sanitizers' reports need (whole stacks with file:line) at about half the
# compile time of -O2 -g; NDEBUG as in the plain build. PROBES ON compiles in the collector's
# benchmark probes (lib/collect/collector_probes.h), so that their code and tests run in CI too.
build() {
  local dir=$1 sanitizers=$2 probes=$3
  shift 3
  cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" -DGPUIDLE_COLLECTOR_PROBES="$probes" \
    -DGPUIDLE_SANITIZE="$sanitizers" -DGPUIDLE_BUILD_EXAMPLES=OFF >/dev/null &&
    cmake --build "$dir" -j "$jobs" --target "$@"
}

# ctest_in DIR [CTEST ARGS...]: the C++ tests of a build, without what is not run under
# sanitizers (and the Python tests, which python_tests_asan runs: the schema check imports the
# Python module too, which needs the ASan runtime preloaded as python_tests_asan does).
ctest_in() {
  local dir=$1
  shift
  ctest --test-dir "$dir" --output-on-failure -j "$jobs" --timeout 600 \
    -E '^install_and_consume$|^python_|^schema_outputs$' "$@"
}

# The interpreter is not instrumented: the ASan runtime has to be the first library of the
# process, with libstdc++ loaded beside it (else ASan cannot intercept the module's C++ throws).
# The plugin tests/sanitizers/preload_runtime.py keeps both first in the tests' child processes.
# Python leaves objects behind at exit, so leaks are not checked here (the C++ tests check the
# same code for them).
python_tests_asan() {
  local python preload
  python=$(sed -n 's/^Python3_EXECUTABLE:[A-Z]*=//p' build-asan/CMakeCache.txt)
  if [ ! -d build-asan/python/gpuidle ] || [ -z "$python" ]; then
    echo "ci_sanitizers: the Python package was not built (pybind11-dev, python3-dev)" >&2
    return 1
  fi
  preload="$(c++ -print-file-name=libasan.so):$(c++ -print-file-name=libstdc++.so)"
  (cd build-asan &&
    GPUIDLE_SANITIZER_PRELOAD="$preload" LD_PRELOAD="$preload" \
    ASAN_OPTIONS="$ASAN_OPTIONS:detect_leaks=0" PYTHONDONTWRITEBYTECODE=1 \
    PYTHONPATH="$root/build-asan/python:$supp" GPUIDLE_CLI="$root/build-asan/bin/gpuidle" \
    GPUIDLE_TEST_DATA_DIR="$root/tests/data" \
    "$python" -m pytest -q -rs -p no:cacheprovider -p preload_runtime \
      --rootdir="$root/tests/python" "$root/tests/python")
}

asan() {
  # intercept_tls_get_addr=0: GCC 12's runtime can take a dynamic TLS block (libcupti's, once it
  # is loaded) for a glibc 2.19 header by the block's address alone and then crash its leak
  # check ("Tracer caught signal 11"; FaultBenchmarkVariables.*). Our thread_locals are in
  # static TLS in every process whose leaks are checked.
  export ASAN_OPTIONS="detect_leaks=1:detect_stack_use_after_return=1:check_initialization_order=1:strict_init_order=1:halt_on_error=1:intercept_tls_get_addr=0"
  export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
  export LSAN_OPTIONS="suppressions=$supp/lsan.supp:print_suppressions=0"
  run "ASan+UBSan build" build build-asan address,undefined ON gpuidle gpuidle_shared \
    gpuidle_python \
    $(test_programs) || return 0
  run "ASan+UBSan C++ tests" ctest_in build-asan || true
  run "ASan+UBSan Python tests" python_tests_asan || true
}

# The code that starts threads: the collector, its decode worker and its timed calls (fake
# CUPTI), host ranges, sessions, host samples, the NVML and PM samplers (fakes), and the trace
# reader's read-ahead thread (every trace that is read: the reader's, round-trip and CLI tests). Not run_command_test: gpuidle run
# starts no thread, and TSan holds a signal handler back while its thread waits in waitpid
# (SA_RESTART), so SIGTERM would reach the command only when it ends (the signal tests fail).
tsan_programs=(buffer_pool_test collector_test call_timing_test call_site_naming_test
               cupti_detach_test decode_worker_test lost_records_test host_ranges_test
               record_translation_test timed_calls_test host_samples_test environment_test profiler_test
               byte_source_test kineto_reader_test trace_round_trip_test cli_test
               metrics_server_test gpu_metrics_sampler_test gpu_throughput_sampler_test)
# The CTest names of their tests, ^(Suite|...)\. from their test lists (build-tsan has only them).
tsan_tests() {
  local program suites
  suites=$(for program in "${tsan_programs[@]}"; do
             "build-tsan/bin/$program" --gtest_list_tests || return 1
           done | sed -n 's/^\([^ ][^ ]*\)\.\( .*\)\{0,1\}$/\1/p' | sort -u | paste -sd '|') &&
    echo "^($suites)\\."
}
tsan() {
  export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1"
  run "TSan build" build build-tsan thread OFF "${tsan_programs[@]}" || return 0
  local tests
  tests=$(tsan_tests) || { failed+=("TSan test list"); return 0; }
  run "TSan tests" ctest_in build-tsan -R "$tests" || true
}

case "$mode" in
  asan) asan ;;
  tsan) tsan ;;
  all) asan; tsan ;;
esac
if ((${#failed[@]})); then
  stage "FAILED: ${failed[*]}"
  exit 1
fi
stage "all passed"
