"""The package itself: layout, public API, type stubs, and how the native module links."""

from __future__ import annotations

import ast
import inspect
import re
import shutil
import subprocess
from pathlib import Path

import pytest

import gpuidle
from gpuidle._native import _gpuidle

from conftest import PACKAGE_DIR, run_cli, run_python


def test_imports_with_the_version_of_the_cli():
    proc = run_cli("version")
    assert proc.returncode == 0
    assert proc.stdout.strip() == f"gpuidle {gpuidle.__version__}"


def test_public_names_exist_and_are_documented():
    for name in gpuidle.__all__:
        obj = getattr(gpuidle, name)
        if inspect.isclass(obj) or inspect.isfunction(obj):
            assert inspect.getdoc(obj), f"gpuidle.{name} has no docstring"
    assert issubclass(gpuidle.GpuidleError, RuntimeError)
    assert gpuidle.GpuidleError.__module__ == "gpuidle"
    assert gpuidle.CAUSES == ("data_starved", "launch_bound", "sync_bound", "unattributed")
    assert len(gpuidle.SUBCAUSES) == 13 and gpuidle.SUBCAUSES[0] == "data_starved.dataloader"


def test_package_is_marked_typed_and_its_stubs_parse():
    assert (PACKAGE_DIR / "py.typed").is_file()
    for source in list(PACKAGE_DIR.glob("*.pyi")) + list(PACKAGE_DIR.glob("*.py")):
        ast.parse(source.read_text(), filename=str(source))


def _stub_names(tree: ast.Module) -> tuple[set[str], dict[str, set[str]]]:
    names, members = set(), {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
        if isinstance(node, ast.ClassDef):
            members[node.name] = {
                n.name for n in node.body if isinstance(n, ast.FunctionDef)
            } | {n.target.id for n in node.body
                 if isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name)}
    return names, members


def test_native_stub_matches_the_native_module():
    names, members = _stub_names(ast.parse((PACKAGE_DIR / "_gpuidle.pyi").read_text()))
    public = {n for n in dir(_gpuidle) if not n.startswith("_")} | {"__version__"}
    assert names == public
    for cls in ("NativeReport", "Profiler"):
        native = {n for n in dir(getattr(_gpuidle, cls)) if not n.startswith("_")}
        assert members[cls] - {"__init__"} == native, cls


def test_library_sits_next_to_the_module_and_is_the_one_loaded():
    soname = next(PACKAGE_DIR.glob("libgpuidle.so.*"))
    assert re.fullmatch(r"libgpuidle\.so\.\d+", soname.name)
    assert Path(_gpuidle.library_path()) == soname
    readelf = shutil.which("readelf")
    if readelf is None:
        pytest.skip("readelf is missing")
    module = next(PACKAGE_DIR.glob("_gpuidle.*.so"))
    dynamic = subprocess.run([readelf, "-d", str(module)], capture_output=True, text=True).stdout
    assert f"[{soname.name}]" in dynamic  # NEEDED
    assert re.search(r"(RPATH|RUNPATH).*\[\$ORIGIN\]", dynamic)


BINDINGS_DIR = Path(__file__).resolve().parents[2] / "bindings" / "python"


def test_native_module_includes_only_public_headers():
    # The module is a client of libgpuidle.so's public API (include/gpuidle), like any other.
    for source in ("_gpuidle.cc", "call_sites.cc"):
        text = (BINDINGS_DIR / source).read_text()
        for header in re.findall(r'^#include\s+"([^"]+)"', text, re.M):
            assert header.startswith(("gpuidle/", "absl/")), f"{source} includes {header}"
        assert '#include "gpuidle/gpuidle.h"' in text or source == "call_sites.cc"


def test_native_module_holds_no_gpuidle_code_and_exports_only_its_init():
    nm = shutil.which("nm")
    if nm is None:
        pytest.skip("nm is missing")
    module = str(next(PACKAGE_DIR.glob("_gpuidle.*.so")))
    symbols = subprocess.run([nm, "-C", module], capture_output=True, text=True).stdout
    # The CLI, the settings and the analysis are libgpuidle.so's: called, not linked in ...
    for called in ("gpuidle::RunCommandLine", "gpuidle::ApplySetting", "gpuidle::Settings()",
                   "gpuidle::AnalyzeTraceFiles"):
        assert re.search(r"^\s+U " + re.escape(called), symbols, re.M), called
    # ... and nothing of gpuidle's internals (static layers, the collector, the session) is in it.
    assert "gpuidle::internal::" not in symbols
    assert "InitializeInjection" not in symbols
    exported = subprocess.run([nm, "-D", "-C", "--defined-only", module], capture_output=True,
                              text=True).stdout
    assert "PyInit__gpuidle" in exported
    assert "gpuidle::" not in exported


MAPPED = ("import gpuidle\n"
          "print(sorted({l.split()[-1] for l in open('/proc/self/maps') if 'libgpuidle' in l}))\n"
          "print(gpuidle._native._gpuidle.library_path())")


def test_injected_library_is_used_instead_of_a_second_copy(tmp_path):
    # gpuidle run, or a launcher, named another libgpuidle.so as the CUDA injection: the driver
    # will dlopen that file at cuInit, so the package must use it rather than its own.
    copy = tmp_path / "libgpuidle.so"
    shutil.copy(_gpuidle.library_path(), copy)
    proc = run_python(MAPPED + "\nimport ctypes; ctypes.CDLL(%r)\n" % str(copy) + MAPPED.split("\n")[1],
                      CUDA_INJECTION64_PATH=str(copy))
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == repr([str(copy)])
    assert lines[1] == str(copy)
    assert lines[2] == repr([str(copy)])  # the driver's dlopen() finds the same library


def test_preloaded_library_is_shared_with_the_module(tmp_path):
    copy = tmp_path / "libgpuidle.so"
    shutil.copy(_gpuidle.library_path(), copy)
    proc = run_python(MAPPED, LD_PRELOAD=str(copy))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == [repr([str(copy)]), str(copy)]


def test_native_module_exports_only_its_init_function():
    """Nothing the module holds may interpose the process's libraries (libstdc++, torch's)."""
    readelf = shutil.which("readelf")
    if readelf is None:
        pytest.skip("readelf is missing")
    module = Path(_gpuidle.__file__)
    table = subprocess.run([readelf, "-W", "--dyn-syms", str(module)], capture_output=True,
                           text=True, check=True).stdout
    defined = set()
    for line in table.splitlines():
        fields = line.split()
        # Num: Value Size Type Bind Vis Ndx Name
        if len(fields) >= 8 and fields[4] in ("GLOBAL", "WEAK") and fields[6] != "UND":
            defined.add(fields[7].split("@")[0])
    assert defined == {"PyInit__gpuidle"}, sorted(defined)[:20]
