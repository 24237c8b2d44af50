"""gpuidle's Python layer in unchanged programs (gpuidle run, LD_PRELOAD): the sitecustomize
that gpuidle run puts first on PYTHONPATH, its chain to the program's own sitecustomize, the
opt-out, and silence in processes that do no CUDA work. Without a GPU here, the injected
collection never starts; what is checked is that the layer is (or is not) loaded and that
nothing of the program changes."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from conftest import PACKAGE_DIR, cli_path, python_env, run

SITE_DIR = PACKAGE_DIR / "_site"
LIBRARY = str(next(PACKAGE_DIR.glob("libgpuidle.so*")))

# A torch that imports in no time, with what the integration patches at install (the
# integration itself is tested with fuller stand-ins in test_torch_integration.py).
FAKE_TORCH = {
    "__init__.py": "from . import utils, optim, autograd\nimport torch.utils.data\n"
                   "import torch.autograd.profiler\nclass Tensor:\n    pass\n",
    "autograd/__init__.py": "",
    "autograd/profiler.py": "class profile:\n    def _prepare_trace(self):\n        pass\n"
                            "    def _start_trace(self):\n        pass\n",
    "utils/__init__.py": "",
    "utils/data/__init__.py": "from . import dataloader\nget_worker_info = lambda: None\n",
    "utils/data/dataloader.py": "class _BaseDataLoaderIter:\n    def __next__(self):\n"
                                "        return 1\n",
    "optim/__init__.py": "",
}


def write_fake_torch(folder: Path) -> None:
    for name, text in FAKE_TORCH.items():
        path = folder / "torch" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)

PROBE = textwrap.dedent("""
    import sys
    before = "gpuidle" in sys.modules
    import torch
    from gpuidle import _autoload
    print("before", before, "active", _autoload._active, "torch", _autoload._torch_installed)
""")


def child_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    """The environment gpuidle run gives a Python program: gpuidle's site folder first, the
    injected library, plus a folder with a stand-in torch."""
    env = python_env()
    env.pop("PYTHONPATH", None)
    write_fake_torch(tmp_path)
    env["PYTHONPATH"] = os.pathsep.join([str(SITE_DIR), str(tmp_path)])
    env["CUDA_INJECTION64_PATH"] = LIBRARY
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env.update(extra)
    return env


def run_child(code: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    return run([sys.executable, "-c", code], env=env)


def test_the_layer_loads_when_the_program_imports_torch_and_not_before(tmp_path):
    proc = run_child(PROBE, child_env(tmp_path))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["before", "False", "active", "True", "torch", "True"]
    assert proc.stderr == ""


def test_a_program_that_never_imports_a_framework_never_loads_gpuidle(tmp_path):
    proc = run_child("import sys, json; print('gpuidle' in sys.modules)", child_env(tmp_path))
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "False\n", "")


def test_the_programs_own_sitecustomize_still_runs(tmp_path):
    theirs = tmp_path / "theirs"
    theirs.mkdir()
    (theirs / "sitecustomize.py").write_text("import os\nos.environ['THEIR_SITE'] = 'ran'\n")
    env = child_env(tmp_path)
    env["PYTHONPATH"] += os.pathsep + str(theirs)
    code = PROBE + textwrap.dedent("""
        import os, sitecustomize
        print(os.environ.get("THEIR_SITE"), sitecustomize.__file__)
    """)
    proc = run_child(code, env)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].split()[3] == "True", "gpuidle's layer is active too"
    assert lines[1] == f"ran {theirs / 'sitecustomize.py'}", "theirs is the sitecustomize module"


def test_an_error_in_their_sitecustomize_is_reported_as_without_gpuidle(tmp_path):
    theirs = tmp_path / "theirs"
    theirs.mkdir()
    (theirs / "sitecustomize.py").write_text("raise RuntimeError('their bug')\n")
    env = child_env(tmp_path)
    env["PYTHONPATH"] += os.pathsep + str(theirs)
    proc = run_child("print('main runs')", env)
    assert proc.returncode == 0 and proc.stdout == "main runs\n"
    assert "their bug" in proc.stderr  # Python's own "Error in sitecustomize" report


@pytest.mark.parametrize("extra", [{"GPUIDLE_PYTHON": "0"}, {"GPUIDLE_PYTHON": "no"},
                                   {"GPUIDLE_DISABLE": "1"},
                                   {"CUDA_INJECTION64_PATH": "/opt/nsight/libToolsInjection64.so"}])
def test_the_opt_out_leaves_the_program_alone(tmp_path, extra):
    code = "import sys, torch; print('gpuidle' in sys.modules)"
    proc = run_child(code, child_env(tmp_path, **extra))
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "False\n", "")


def test_a_python_the_package_was_not_built_for_runs_as_without_gpuidle(tmp_path):
    # A copy of the package without a native module for this interpreter (as for another
    # Python version): the site hook does nothing at all.
    copy = tmp_path / "pkg" / "gpuidle"
    shutil.copytree(PACKAGE_DIR, copy, symlinks=True,
                    ignore=shutil.ignore_patterns("_gpuidle.*.so", "__pycache__"))
    env = child_env(tmp_path)
    env["PYTHONPATH"] = os.pathsep.join([str(copy / "_site"), str(tmp_path)])
    code = "import sys, torch; print('gpuidle' in sys.modules, len(sys.meta_path))"
    plain = dict(env, PYTHONPATH=str(tmp_path))
    assert run_child(code, env).stdout == run_child(code, plain).stdout
    proc = run_child(code, env)
    assert proc.stdout.startswith("False") and proc.stderr == ""


def test_another_python_version_runs_as_without_gpuidle(tmp_path):
    other = shutil.which("python3")
    if other is None:
        pytest.skip("no other python3 on PATH")
    version = run([other, "-c", "import sys; print(sys.version_info[:2])"]).stdout
    if version.strip() == str(tuple(sys.version_info[:2])):
        pytest.skip("python3 on PATH is this Python")
    env = child_env(tmp_path)
    proc = run([other, "-c", "import sys, torch; print('gpuidle' in sys.modules)"], env=env)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "False\n", "")


def run_gpuidle(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    return run([cli_path(), "run", *args], env=env)


def test_gpuidle_run_puts_the_layer_first_on_pythonpath_and_a_probe_prints_nothing(tmp_path):
    env = python_env(GPUIDLE_WARNED="1")  # the one no-GPU line of this machine, said already
    env["PYTHONPATH"] = str(tmp_path)
    write_fake_torch(tmp_path)
    proc = run_gpuidle("--", sys.executable, "-c", "print(1)", env=env)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "1\n", "")
    code = "import os, torch, gpuidle._autoload as a; print(os.environ['PYTHONPATH'], a._active)"
    proc = run_gpuidle("--", sys.executable, "-c", code, env=env)
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    path, active = proc.stdout.split()
    assert path.split(os.pathsep) == [str(SITE_DIR.resolve()), str(tmp_path)]
    assert active == "True"


def test_gpuidle_run_no_python_leaves_pythonpath_alone(tmp_path):
    env = python_env(GPUIDLE_WARNED="1")
    env["PYTHONPATH"] = str(tmp_path)
    code = "import os; print(os.environ['PYTHONPATH'])"
    for args in (["--no-python"], []):
        extra = {} if args else {"GPUIDLE_PYTHON": "0"}
        proc = run_gpuidle(*args, "--", sys.executable, "-c", code, env=dict(env, **extra))
        assert (proc.returncode, proc.stdout, proc.stderr) == (0, f"{tmp_path}\n", "")


def test_gpuidle_run_refuses_a_bad_python_switch(tmp_path):
    env = python_env(GPUIDLE_PYTHON="maybe")
    proc = run_gpuidle("--", sys.executable, "-c", "print(1)", env=env)
    assert proc.returncode == 2 and "GPUIDLE_PYTHON=maybe" in proc.stderr


# --- the stop at exit ----------------------------------------------------------------------------
# Without a GPU the injected collection never runs, so the native state and stop are stand-ins
# here: the collection "runs" until its stop is called. What the GPU part checks for real
# (tests/gpu/faults): the report is written on Ctrl-C, once.

EXIT_PROGRAM = textwrap.dedent("""
    import atexit, os, signal, sys, time
    # Ctrl-C as a terminal's program gets it, also where the tests were started in the
    # background (which leaves SIGINT ignored, and Python then keeps it so).
    signal.signal(signal.SIGINT, signal.default_int_handler)
    atexit.register(lambda: print("the program's own exit handler", flush=True))
    import torch
    from gpuidle import _autoload
    from gpuidle._native import _gpuidle

    mode = sys.argv[1]
    state = {"collecting": mode != "no_cuda", "injected": mode != "a_profile"}

    def collection_state():
        return dict(state, started_by="CUDA_INJECTION64_PATH", host_sample_period_ns=0,
                    launch_gap_max_ns=1000000)

    def stop():
        print("stopped, collecting:", state["collecting"], flush=True)
        state["collecting"] = False

    _gpuidle.collection_state = collection_state
    _gpuidle.stop_collection_for_another_tool = stop
    if mode == "stopped_before":
        print("stop_at_exit:", _autoload.stop_at_exit(), flush=True)
    print("main ends", flush=True)
    if mode == "ctrl_c":
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(30)
    if mode == "sys_exit":
        sys.exit(3)
""")


@pytest.mark.parametrize("mode, code", [("normal", 0), ("ctrl_c", -2), ("sys_exit", 3)])
def test_the_injected_collection_stops_once_at_python_exit_after_the_programs_handlers(
        tmp_path, mode, code):
    proc = run([sys.executable, "-c", EXIT_PROGRAM, mode], env=child_env(tmp_path))
    assert proc.returncode == code, proc.stderr
    # After the program's exit handlers (registered before the layer was loaded), so that their
    # CUDA work is recorded too; once; and still on Ctrl-C, where the C handler never runs.
    assert proc.stdout.splitlines() == ["main ends", "the program's own exit handler",
                                        "stopped, collecting: True"]
    if mode == "ctrl_c":
        assert "KeyboardInterrupt" in proc.stderr
    else:
        assert proc.stderr == ""


@pytest.mark.parametrize("mode", ["no_cuda", "a_profile", "stopped_before"])
def test_nothing_is_stopped_at_exit_that_is_not_the_running_injected_collection(tmp_path, mode):
    proc = run([sys.executable, "-c", EXIT_PROGRAM, mode], env=child_env(tmp_path))
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    lines = proc.stdout.splitlines()
    if mode == "stopped_before":  # stopped once, by hand; at exit there is nothing left
        assert lines == ["stopped, collecting: True", "stop_at_exit: True", "main ends",
                         "the program's own exit handler"]
    else:
        assert lines == ["main ends", "the program's own exit handler"]


def test_the_stop_at_exit_is_not_registered_without_the_layer(tmp_path):
    # GPUIDLE_PYTHON=0: no exit handler of gpuidle's in Python (atexit counts them).
    code = "import atexit; print(atexit._ncallbacks())"
    on = run_child(code, child_env(tmp_path))
    off = run_child(code, child_env(tmp_path, GPUIDLE_PYTHON="0"))
    plain = run_child(code, dict(child_env(tmp_path), PYTHONPATH=str(tmp_path)))
    assert (on.returncode, off.returncode, plain.returncode) == (0, 0, 0)
    assert int(off.stdout) == int(plain.stdout)
    assert int(on.stdout) == int(plain.stdout) + 1
