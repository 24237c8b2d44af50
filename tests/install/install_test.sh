#!/usr/bin/env bash
# Installs gpuidle into a temporary prefix and uses it the way other projects do:
#   1. `cmake --install` gives the expected layout (library + SONAME links, CLI, public headers,
#      CMake package, pkg-config file) and nothing internal (static layers, lib/ headers);
#   2. examples/cpp/find_package builds against the prefix with find_package(gpuidle) and
#      analyses a bundled trace;
#   3. a one-file program builds with `pkg-config --cflags --libs gpuidle` and runs;
#   4. each public header compiles on its own with only the pkg-config flags;
#   5. libgpuidle.so exports only the public API (see the allowlist below).
#
#   install_test.sh BUILD_DIR SOURCE_DIR
# Environment (CTest sets them from the build): CMAKE, CXX, CMAKE_GENERATOR, KEEP_TMP=1 keeps
# the temporary directory for inspection.
set -euo pipefail

build_dir=$(cd "${1:?usage: install_test.sh BUILD_DIR SOURCE_DIR}" && pwd)
source_dir=$(cd "${2:?usage: install_test.sh BUILD_DIR SOURCE_DIR}" && pwd)
cmake_cmd=${CMAKE:-cmake}
cxx=${CXX:-c++}
generator=${CMAKE_GENERATOR:-}
trace="$source_dir/tests/data/traces/torch/healthy_matmul.json.gz"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/gpuidle_install_test.XXXXXX")
if [ "${KEEP_TMP:-0}" = 1 ]; then
  echo "install_test: keeping $tmp"
else
  trap 'rm -rf "$tmp"' EXIT
fi
prefix="$tmp/prefix"
failures=0

fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }
die() { echo "FAIL: $*" >&2; exit 1; }
step() { echo "--- [${SECONDS}s] $*"; }
# Runs a command quietly; on failure shows its output and stops the test.
quiet() {
  local what=$1; shift
  if ! "$@" >"$tmp/log" 2>&1; then
    cat "$tmp/log" >&2
    die "$what (command: $*)"
  fi
}

# --- 1. install --------------------------------------------------------------------------------
step "cmake --install $build_dir --prefix $prefix"
quiet "cmake --install failed" "$cmake_cmd" --install "$build_dir" --prefix "$prefix"

lib=$(find "$prefix" -name 'libgpuidle.so.*.*.*' -type f | head -n 1)
[ -n "$lib" ] || die "no libgpuidle.so.X.Y.Z installed under $prefix"
libdir=$(dirname "$lib")
soname=$(readelf -d "$lib" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
[ -n "$soname" ] || fail "$lib has no SONAME"
rel_libdir=${libdir#"$prefix"/}  # lib, or lib/x86_64-linux-gnu for a build configured for /usr
links_to_lib() { [ -L "$1" ] && [ "$(readlink -f "$1")" = "$(readlink -f "$lib")" ]; }
if ! links_to_lib "$libdir/$soname"; then
  fail "SONAME link $rel_libdir/$soname -> $(basename "$lib") missing"
fi
if ! links_to_lib "$libdir/libgpuidle.so"; then
  fail "development link $rel_libdir/libgpuidle.so -> $(basename "$lib") missing"
fi

for f in bin/gpuidle "$rel_libdir/pkgconfig/gpuidle.pc" \
         "$rel_libdir/cmake/gpuidle/gpuidleConfig.cmake" \
         "$rel_libdir/cmake/gpuidle/gpuidleConfigVersion.cmake" \
         "$rel_libdir/cmake/gpuidle/gpuidleTargets.cmake"; do
  [ -e "$prefix/$f" ] || fail "$f not installed"
done
for h in "$source_dir"/include/gpuidle/*.h; do
  [ -f "$prefix/include/gpuidle/$(basename "$h")" ] || fail "public header $(basename "$h") not installed"
done
for s in "$source_dir"/docs/schema/*.schema.json; do
  [ -f "$prefix/share/gpuidle/schema/$(basename "$s")" ] || fail "schema $(basename "$s") not installed"
done
stray=$(cd "$prefix" && find . \( -name '*.a' -o -name '*.o' \) -print -o -path ./include -prune \
          -o -name '*.h' -print | sed 's|^\./||')
[ -z "$stray" ] || fail "internal files installed: $stray"
internal_headers=$(cd "$prefix/include" && find . -type f ! -path './gpuidle/*.h')
[ -z "$internal_headers" ] || fail "unexpected files under include/: $internal_headers"

# The CLI finds libgpuidle.so next to itself (`gpuidle run` injects it).
runpath=$(readelf -d "$prefix/bin/gpuidle" | sed -n 's/.*(RUNPATH).*\[\(.*\)\]/\1/p')
want="\$ORIGIN/../$rel_libdir"
case ":$runpath:" in *":$want:"*) ;; *) fail "bin/gpuidle RUNPATH is '$runpath', want '$want'" ;; esac
if "$prefix/bin/gpuidle" analyze "$trace" >"$tmp/cli.out" 2>&1; then
  grep -q 'idle' "$tmp/cli.out" || fail "installed gpuidle analyze printed no idle summary"
else
  cat "$tmp/cli.out" >&2; fail "installed bin/gpuidle analyze failed"
fi

# --- 2. find_package(gpuidle) ------------------------------------------------------------------
step "find_package(gpuidle): examples/cpp/find_package"
consumer="$tmp/find_package"
gen_args=()
[ -n "$generator" ] && gen_args=(-G "$generator")
quiet "configuring examples/cpp/find_package against $prefix failed" \
  "$cmake_cmd" -S "$source_dir/examples/cpp/find_package" -B "$consumer" "${gen_args[@]}" \
  -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_PREFIX_PATH="$prefix" \
  -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF -DCMAKE_FIND_USE_SYSTEM_PACKAGE_REGISTRY=OFF
found_dir=$(sed -n 's/^gpuidle_DIR:PATH=//p' "$consumer/CMakeCache.txt")
case "$found_dir" in "$prefix"/*) ;; *) fail "find_package(gpuidle) found '$found_dir', not the test prefix" ;; esac
quiet "building examples/cpp/find_package failed" "$cmake_cmd" --build "$consumer"
# grep reads all of ldd's output: with -q it could exit first, and pipefail would then count
# ldd's SIGPIPE as a failure (seen under parallel ctest).
ldd "$consumer/idle_report" | grep "libgpuidle.so.* => $prefix/" >/dev/null ||
  fail "idle_report does not load libgpuidle.so from $prefix: $(ldd "$consumer/idle_report" | grep gpuidle)"
if "$consumer/idle_report" "$trace" >"$tmp/consumer.out" 2>&1; then
  grep -q 'GPU 0  NVIDIA H200' "$tmp/consumer.out" || fail "consumer output does not name the device (GPU 0  NVIDIA H200)"
  grep -q 'idle' "$tmp/consumer.out" || fail "consumer output does not mention idle time"
  # Profiler::Start() answers (an error where there is no GPU) instead of crashing the program.
  grep -q '^live profiler: ' "$tmp/consumer.out" || fail "consumer printed no Profiler::Start() status"
else
  cat "$tmp/consumer.out" >&2; fail "idle_report $trace failed"
fi

# --- 3. pkg-config gpuidle ---------------------------------------------------------------------
step "pkg-config --cflags --libs gpuidle"
export PKG_CONFIG_PATH="$libdir/pkgconfig"
pc_flags=$(pkg-config --cflags --libs gpuidle) || die "pkg-config gpuidle failed (PKG_CONFIG_PATH=$PKG_CONFIG_PATH)"
pc_cflags=$(pkg-config --cflags gpuidle)
cat >"$tmp/pc_consumer.cc" <<'CC'
#include <iostream>
#include "gpuidle/analyze.h"
int main(int argc, char** argv) {
  if (argc != 2) return 2;
  absl::StatusOr<gpuidle::Report> report = gpuidle::AnalyzeTraceFiles({argv[1]});
  if (!report.ok()) { std::cerr << report.status() << "\n"; return 1; }
  for (const gpuidle::DeviceReport& d : report->devices)
    std::cout << "device " << d.device << " idle_ns " << d.idle_ns << " dominant "
              << gpuidle::QualifiedSubcauseName(d.idle.Dominant()) << "\n";
  return report->devices.empty() ? 1 : 0;
}
CC
# shellcheck disable=SC2086  # pkg-config output is a list of flags
quiet "compiling a consumer with pkg-config flags failed" \
  "$cxx" -std=c++17 "$tmp/pc_consumer.cc" -o "$tmp/pc_consumer" $pc_flags -Wl,-rpath,"$libdir"
if "$tmp/pc_consumer" "$trace" >"$tmp/pc.out" 2>&1; then
  grep -q '^device 0 idle_ns [0-9]' "$tmp/pc.out" || fail "pkg-config consumer printed: $(cat "$tmp/pc.out")"
else
  cat "$tmp/pc.out" >&2; fail "pkg-config consumer failed"
fi

# --- 4. every public header stands alone -------------------------------------------------------
step "public headers compile on their own"
pids=()
for h in "$prefix"/include/gpuidle/*.h; do
  name=$(basename "$h")
  # shellcheck disable=SC2086
  (echo "#include \"gpuidle/$name\"" | "$cxx" -std=c++17 -fsyntax-only -x c++ $pc_cflags - \
     >"$tmp/hdr_$name.log" 2>&1 || { cat "$tmp/hdr_$name.log" >&2; exit 1; }) &
  pids+=("$!:$name")
done
for p in "${pids[@]}"; do wait "${p%%:*}" || fail "gpuidle/${p#*:} does not compile on its own"; done

# --- 5. exported symbols -----------------------------------------------------------------------
# Allowed: the public API in namespace gpuidle (not gpuidle::internal), its typeinfo/vtables,
# and the C entry points that CUDA_INJECTION64_PATH / NVTX look up.
# Tolerated: weak instantiations of libstdc++ templates (std::, __gnu_cxx::). libstdc++ declares
# namespace std with default visibility, so an out-of-line member of a std template instantiated
# on public types (int, std::string, absl::string_view, a public enum) stays default-visible even
# under -fvisibility=hidden, and would bind to the host's identical copy. The linker version
# script (lib/inject/exports.map) makes them local; without it they are listed here but do not
# fail the test, unless they mention internal types (gpuidle::internal, rapidjson). Anything
# else (absl::, rapidjson::, zlib, strong std symbols) fails.
step "nm -D --defined-only libgpuidle.so"
nm -D --defined-only "$lib" | awk 'NF == 3 {print $2 "\t" $3}' >"$tmp/syms"
[ -s "$tmp/syms" ] || die "nm found no dynamic symbols in $lib"
grep -q 'AnalyzeTraceFiles' "$tmp/syms" || fail "gpuidle::AnalyzeTraceFiles is not exported"
cut -f2 "$tmp/syms" | c++filt | paste "$tmp/syms" - >"$tmp/syms_demangled"
tolerated=0
while IFS=$'\t' read -r type sym demangled; do
  case "$sym" in
    InitializeInjection | InitializeInjectionNvtx2) continue ;;
  esac
  case "$demangled" in
    gpuidle::internal::* | *" for gpuidle::internal::"*) ;;
    gpuidle::* | "typeinfo for gpuidle::"* | "typeinfo name for gpuidle::"* | \
    "vtable for gpuidle::"*) continue ;;
  esac
  if [[ "$type" =~ ^[WVu]$ && "$sym" =~ ^_Z(T[VIST]|GV|Z)?N?K?(St|9__gnu_cxx) &&
        ! "$demangled" =~ (gpuidle::internal|rapidjson) ]]; then
    tolerated=$((tolerated + 1))
    echo "  tolerated weak std instantiation: $demangled" >>"$tmp/tolerated"
    continue
  fi
  fail "libgpuidle.so exports a non-public symbol: [$type] $demangled ($sym)"
done <"$tmp/syms_demangled"
if [ "$tolerated" -gt 0 ]; then
  echo "note: $tolerated weak libstdc++ template instantiations exported (tolerated):"
  cat "$tmp/tolerated"
fi

if [ "$failures" -gt 0 ]; then
  echo "install_test: $failures check(s) failed" >&2
  exit 1
fi
echo "install_test: OK in ${SECONDS}s ($(grep -c . "$tmp/syms") exported symbols, layout under $prefix checked)"
