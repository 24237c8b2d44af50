"""Shared helpers for the Python package's CPU tests.

CTest sets PYTHONPATH=<build>/python, GPUIDLE_CLI (the gpuidle executable of the same build) and
GPUIDLE_TEST_DATA_DIR; run by hand:

    PYTHONPATH=build/python GPUIDLE_CLI=build/bin/gpuidle /usr/bin/python3 -m pytest tests/python
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import gpuidle

PACKAGE_DIR = Path(gpuidle.__file__).resolve().parent
DATA_DIR = Path(os.environ.get("GPUIDLE_TEST_DATA_DIR", Path(__file__).resolve().parents[1] / "data"))
TORCH_TRACES = sorted((DATA_DIR / "traces" / "torch").glob("*.json.gz"))
LIVE_TRACES = sorted((DATA_DIR / "traces" / "live").glob("*.trace.json.gz"))


def host_has_nvidia_gpu(dev_dir: str = "/dev") -> bool:
    """Whether gpuidle finds an NVIDIA GPU here, decided as it decides at every way in
    (lib/collect/cuda_driver.h CheckForNvidiaGpu): the driver's /dev/nvidiactl, or /dev/dxg
    under WSL 2."""
    return any(os.path.exists(os.path.join(dev_dir, node)) for node in ("nvidiactl", "dxg"))


HAS_GPU = host_has_nvidia_gpu()
# For the tests of what gpuidle says and does without a GPU (its one "no NVIDIA GPU" warning, a
# refused start): they would fail on a GPU host, so they skip there.
no_gpu = pytest.mark.skipif(HAS_GPU, reason="checks the behaviour without an NVIDIA GPU; "
                            "this machine has one")


def build_can_collect() -> bool:
    """False for a build without the live collector (-DGPUIDLE_WITH_CUPTI=OFF)."""
    from gpuidle._native import _gpuidle

    return bool(_gpuidle.collection_state()["supported"])


# For the tests of what the live collector says (a missing GPU or CUPTI): a build without it
# says only that it cannot collect.
with_collector = pytest.mark.skipif(not build_can_collect(),
                                    reason="checks what the live collector says; this build has "
                                    "none (GPUIDLE_WITH_CUPTI=OFF)")


def cli_path() -> str:
    path = os.environ.get("GPUIDLE_CLI") or str(PACKAGE_DIR.parents[1] / "bin" / "gpuidle")
    if not os.access(path, os.X_OK):
        pytest.skip(f"the gpuidle CLI is not at {path} (set GPUIDLE_CLI)")
    return path


def run(args: list[str], **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run(args, capture_output=True, text=True, timeout=120, **kwargs)


def run_cli(*args: str) -> subprocess.CompletedProcess:
    return run([cli_path(), *args])


def cli_json(*args: str) -> dict:
    proc = run_cli("analyze", "--format", "json", *args)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def python_env(**extra: str) -> dict[str, str]:
    """The environment for a child Python that imports this very package."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [str(PACKAGE_DIR.parent)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    for name in ("GPUIDLE_WARNED", "GPUIDLE_LIBRARY", "CUDA_INJECTION64_PATH", "LD_PRELOAD"):
        env.pop(name, None)
    env.update(extra)
    return env


def run_python(code: str, *args: str, **extra_env: str) -> subprocess.CompletedProcess:
    return run([sys.executable, "-c", code, *args], env=python_env(**extra_env))


def gpuidle_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("gpuidle:")]
