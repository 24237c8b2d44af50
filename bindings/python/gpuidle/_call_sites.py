"""The Python line behind the CUDA calls that make a GPU wait.

The report's offenders say which line made the GPU wait (``train.py:57 in train_step`` for an
``.item()`` there): the innermost frame of the program's own code, skipping library frames (the
standard library, site-packages with torch, gpuidle itself). Two sources:

- natively (call_sites.cc): at the start of every CUDA sync and copy, and of one launch per
  millisecond of each thread (the line holds for the thread's launches until the next), when the
  calling thread holds the GIL (plain Python extensions, CuPy's raw calls);
- from Python (:func:`caller_site`), around PyTorch's sync points (``_torch.py``): PyTorch
  releases the GIL inside its operators, so the native path never sees their frames.
"""

from __future__ import annotations

import os
import site
import sys
import sysconfig
from typing import Any, Optional

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


_prefixes: tuple[str, ...] = ()
_is_library: dict[Any, bool] = {}  # code object -> library code?
_sites: dict[tuple[Any, int], str] = {}  # (code object, line) -> "file:line in function"
_MAX_SITES = 100_000


def caller_site(skip: int = 2) -> Optional[str]:
    """The program's innermost frame above the caller's caller, as "file:line in function"."""
    try:
        frame: Any = sys._getframe(skip)
    except ValueError:
        return None
    while frame is not None:
        code = frame.f_code
        library = _is_library.get(code)
        if library is None:
            name = code.co_filename
            library = not name or name.startswith("<") or name.startswith(_prefixes)
            if len(_is_library) < _MAX_SITES:  # generated code (torch.compile) must not grow it
                _is_library[code] = library
        if not library:
            key = (code, frame.f_lineno)
            site = _sites.get(key)
            if site is None and len(_sites) < _MAX_SITES:
                site = f"{code.co_filename}:{frame.f_lineno} in {code.co_name}"
                _sites[key] = site
            return site
        frame = frame.f_back
    return None


_users = 0  # a profile and the autoload (gpuidle run) may both want them


def enable() -> None:
    global _prefixes, _users
    _users += 1
    refresh()


def refresh() -> None:
    """Reads the library folders again (torch was imported since)."""
    global _prefixes
    prefixes = library_prefixes()
    if tuple(prefixes) != _prefixes:
        _prefixes = tuple(prefixes)
        _is_library.clear()
    _gpuidle.enable_call_sites(prefixes)


def disable() -> None:
    global _users
    _users = max(0, _users - 1)
    if _users == 0:
        _gpuidle.disable_call_sites()
