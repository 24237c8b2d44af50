"""Loads the native module so that the process holds one libgpuidle.so.

libgpuidle.so owns the process's collection (CUPTI has one client per process). It can come into
a process three ways: as the dependency of ``gpuidle._gpuidle`` (found next to it, RPATH
``$ORIGIN``), through ``LD_PRELOAD``, and through ``CUDA_INJECTION64_PATH``, which the CUDA driver
``dlopen()``\\ s at ``cuInit`` (``gpuidle run`` sets it). The dynamic loader satisfies the module's
dependency, ``libgpuidle.so.<major>``, with any library of that SONAME already loaded, so the
first two share one copy by themselves. The driver's ``dlopen`` of a path, though, finds an
already loaded library only under the same name or file: a package whose own copy was loaded
first would get a second library, with a second collector, at ``cuInit``. Loading the injected
file first closes that gap.
"""

from __future__ import annotations

import ctypes
import os

_injected: ctypes.CDLL | None = None


def _load_injected_library() -> None:
    global _injected
    path = os.environ.get("CUDA_INJECTION64_PATH", "")
    if not path or not os.path.basename(path).startswith("libgpuidle.so"):
        return
    try:
        _injected = ctypes.CDLL(path)
    except OSError:
        # The driver will not load it either; the package's own copy serves.
        pass


_load_injected_library()

from . import _gpuidle  # noqa: E402  (after the injected library, on purpose)

__all__ = ["_gpuidle"]
