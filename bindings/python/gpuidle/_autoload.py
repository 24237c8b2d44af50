"""gpuidle's Python layer in a program that never imports gpuidle (``gpuidle run``, ``LD_PRELOAD``).

There the collection is the injected one: ``libgpuidle.so`` starts it when the program
initialises CUDA and writes the report at exit. This module adds to it what a
``gpuidle.profile()`` adds in Python: DataLoader data ranges, the Python lines of syncs and
launches (call sites), optimizer steps, sampled host stacks, and the hand-over to torch.profiler.
It attaches to the injected collection; it never starts a second one.

``gpuidle/_site/sitecustomize.py`` calls :func:`activate` right after the program imported
torch, jax, cupy or tensorflow (never earlier, and it never imports any of them itself), so that
the call-site provider is set before the program's first CUDA call starts the collection.
:func:`activate` never raises and prints nothing.
"""

from __future__ import annotations

import sys
import threading
from typing import Optional

from . import _call_sites, _sampler
from ._native import _gpuidle

_lock = threading.Lock()
_active = False
_torch_installed = False


class _InjectedCollection:
    """What gpuidle/_torch.py asks of a profile, for the injected collection."""

    @property
    def active(self) -> bool:
        try:
            return bool(_gpuidle.collection_state()["collecting"])
        except Exception:
            return False

    def stop(self) -> Optional[str]:
        # torch.profiler is about to take CUPTI: the injected collection ends here (its report
        # covers the time until now).
        return _gpuidle.stop_collection_for_another_tool()


def activate(framework: str = "") -> bool:
    """Attaches gpuidle's Python layer to this process's injected collection; True if active."""
    global _active
    try:
        with _lock:
            if not _active:
                _call_sites.enable()
                _sampler.acquire()  # waits, GIL released, until the collection runs
                _active = True
            elif framework == "torch":
                _call_sites.refresh()  # torch's folder is library code too
            _install_torch()
        return True
    except Exception:
        return False


def _install_torch() -> None:
    global _torch_installed
    if _torch_installed or "torch" not in sys.modules:
        return
    from . import _torch

    if _torch.in_worker():
        return
    _torch_installed = _torch.install(_InjectedCollection())
