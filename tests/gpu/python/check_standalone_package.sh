#!/usr/bin/env bash
# The Python package stands alone (issue 14): built with pip on the GPU machine against the
# staged Abseil (.devdeps, ../shared/GPU.md), installed into a clean folder, it imports and
# works with no LD_LIBRARY_PATH and no .devdeps on any path, because the libraries it needs
# beyond a usual system (Abseil) are inside it (GPUIDLE_PYTHON_BUNDLE_DEPS, on under pip).
#
#   cd <repo root> && tests/gpu/python/check_standalone_package.sh
#   device run: carry [".devdeps"]; results under $OUT/standalone_package (or a temporary folder)
#
# Environment: PYTHON (default /opt/torch/.venv/bin/python3, else python3), OUT.
# Prints one PASS/FAIL line per check and a summary; exits 1 if any check failed.
set -uo pipefail

root=$(pwd)
[ -f "$root/pyproject.toml" ] || { echo "FAIL run me from the repository root"; exit 1; }
python=${PYTHON:-/opt/torch/.venv/bin/python3}
[ -x "$python" ] || python=$(command -v python3)
work=${OUT:-$(mktemp -d)}/standalone_package
rm -rf "$work" && mkdir -p "$work"
trace="$root/tests/data/traces/torch/healthy_matmul.json.gz"
results=()
failures=0

check() {  # check NAME COMMAND...: PASS if the command succeeds
  local name=$1; shift
  if "$@" >"$work/$name.log" 2>&1; then
    results+=("PASS $name")
  else
    results+=("FAIL $name (see $work/$name.log: $(tail -n 2 "$work/$name.log" | tr '\n' ' ' | cut -c1-200))")
    failures=$((failures + 1))
  fi
}

# The build finds Debian's Abseil in .devdeps (CMake reads CMAKE_PREFIX_PATH from the
# environment); nothing at run time may.
build_env=(env CMAKE_PREFIX_PATH="$root/.devdeps/usr" CMAKE_BUILD_PARALLEL_LEVEL="$(nproc)")
check pip_wheel "${build_env[@]}" "$python" -m pip wheel --no-build-isolation --no-deps \
  -w "$work/wheel" "$root"
check pip_install_target "${build_env[@]}" "$python" -m pip install --no-build-isolation \
  --no-deps --target "$work/target" "$root"

wheel=$(ls "$work"/wheel/gpuidle-*.whl 2>/dev/null | head -n 1)
wheel_says() {  # what the wheel's metadata says it needs
  [ -n "$wheel" ] || { echo "no wheel"; return 1; }
  "$python" - "$wheel" <<'PY'
import sys, zipfile
wheel = zipfile.ZipFile(sys.argv[1])
names = wheel.namelist()
meta = wheel.read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode()
tags = wheel.read(next(n for n in names if n.endswith(".dist-info/WHEEL"))).decode()
print(meta.split("\n\n")[0]); print(tags)
assert "Requires-Python: >=3.9" in meta, "no Requires-Python"
assert "NVIDIA" in meta and "CUPTI" in meta, "the system requirement is not described"
tag = next(l for l in tags.splitlines() if l.startswith("Tag:"))
assert "linux_x86_64" in tag and "none-any" not in tag, tag
assert any(n.startswith("gpuidle/libabsl_") for n in names), "Abseil is not in the wheel"
assert any(n.startswith("gpuidle/libgpuidle.so.") for n in names), "libgpuidle.so is not in the wheel"
links = [i.filename for i in wheel.infolist() if (i.external_attr >> 16) & 0o170000 == 0o120000]
assert not links, f"symbolic links in the wheel: {links}"
PY
}
check wheel_metadata wheel_says

pkg="$work/target/gpuidle"
# An environment with nothing of the build: no LD_LIBRARY_PATH, no .devdeps, no build tree.
clean=(env -i PATH=/usr/bin:/bin HOME="$work" PYTHONNOUSERSITE=1 PYTHONPATH="$work/target")

no_missing_libraries() {
  local f status=0
  for f in "$pkg"/_gpuidle.*.so "$pkg"/libgpuidle.so.*; do
    echo "== $f"; readelf -d "$f" | grep -E 'NEEDED|RPATH|RUNPATH'
    if readelf -d "$f" | grep -E 'RPATH|RUNPATH' | grep -qE '\.devdeps|/build'; then
      echo "run path points into the build: $f"; status=1
    fi
    "${clean[@]}" ldd "$f" | tee "$work/ldd.$(basename "$f").txt"
    if grep -q 'not found' "$work/ldd.$(basename "$f").txt"; then status=1; fi
    # Every Abseil library from the package itself.
    if grep 'libabsl_' "$work/ldd.$(basename "$f").txt" | grep -qv "=> $pkg/"; then
      echo "Abseil loaded from outside the package: $f"; status=1
    fi
  done
  return $status
}
check ldd_no_missing_libraries no_missing_libraries

check import_clean_env "${clean[@]}" "$python" -c "
import gpuidle
maps = {l.split()[-1] for l in open('/proc/self/maps') if 'absl' in l or 'libgpuidle' in l}
outside = sorted(p for p in maps if not p.startswith('$pkg/'))
print(gpuidle.__version__, len(maps), 'libraries from the package', outside)
assert not outside, outside
"
check python_m_gpuidle_version sh -c "\"\$@\" -m gpuidle version | grep -q '^gpuidle [0-9]'" _ \
  "${clean[@]}" "$python"
check analyze_bundled_trace "${clean[@]}" "$python" -c "
import json, subprocess, sys, gpuidle
report = gpuidle.analyze('$trace')
assert report.devices, 'no device in the report'
cli = subprocess.run([sys.executable, '-m', 'gpuidle', 'analyze', '--format', 'json', '$trace'],
                     capture_output=True, text=True)
assert cli.returncode == 0, cli.stderr
assert json.loads(cli.stdout) == json.loads(report.to_json())
print(report.summary().splitlines()[0])
"

echo "--- standalone package ($python, $(uname -m), $(. /etc/os-release && echo "$PRETTY_NAME"))"
printf '%s\n' "${results[@]}"
echo "$((${#results[@]} - failures)) of ${#results[@]} checks passed; logs in $work"
[ "$failures" -eq 0 ]
