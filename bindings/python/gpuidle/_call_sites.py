"""The Python line behind each CUDA launch, sync and copy (native part: call_sites.cc).

While a profile collects, gpuidle names the innermost frame of the program's own code at the
start of every CUDA runtime launch, sync and copy, so that the report's offenders say which line
made the GPU wait (``train.py:57 in train_step`` for an ``.item()`` there). Frames in libraries
are skipped: the standard library, site-packages (torch and the rest) and gpuidle itself.
"""

from __future__ import annotations

import os
import site
import sys
import sysconfig

from ._native import _gpuidle


def library_prefixes() -> list[str]:
    """Folders whose files are library code, not the program's (each ends with a separator)."""
    folders = set()
    paths = sysconfig.get_paths()
    for key in ("stdlib", "platstdlib", "purelib", "platlib"):
        if paths.get(key):
            folders.add(paths[key])
    try:
        folders.update(site.getsitepackages())
        folders.add(site.getusersitepackages())
    except AttributeError:  # virtualenv's old site module
        pass
    folders.add(os.path.dirname(os.path.abspath(__file__)))  # gpuidle
    torch = sys.modules.get("torch")
    if torch is not None and getattr(torch, "__file__", None):
        folders.add(os.path.dirname(os.path.abspath(torch.__file__)))  # a source checkout
    return sorted(os.path.join(os.path.abspath(f), "") for f in folders if f)


def enable() -> None:
    _gpuidle.enable_call_sites(library_prefixes())


def disable() -> None:
    _gpuidle.disable_call_sites()
