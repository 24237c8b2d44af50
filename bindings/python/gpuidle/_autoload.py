"""gpuidle's Python layer in a program that never imports gpuidle (``gpuidle run``, ``LD_PRELOAD``).

There the collection is the injected one: ``libgpuidle.so`` starts it when the program
initialises CUDA and writes the report at exit. This module adds to it what a
``gpuidle.profile()`` adds in Python: DataLoader data ranges, the Python lines of syncs and
launches (call sites), optimizer steps, sampled host stacks, and the hand-over to torch.profiler.
It attaches to the injected collection; it never starts a second one.

``gpuidle/_site/sitecustomize.py`` calls :func:`activate` right after the program imported
torch, jax, cupy or tensorflow (never earlier, and it never imports any of them itself), so that
the call-site provider is set before the program's first CUDA call starts the collection.
:func:`activate` never raises and prints nothing. At exit, sitecustomize calls
:func:`stop_at_exit`, so that the report is written on Ctrl-C too.
"""

from __future__ import annotations

import signal
import sys
import threading
from typing import Optional

from . import _call_sites, _os_exit, _sampler
from ._native import _gpuidle

_lock = threading.Lock()
_active = False
_torch_installed = False
_serving_installed = False


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
                _os_exit.install()
            elif framework == "torch":
                _call_sites.refresh()  # torch's folder is library code too
            _install_torch()
            _install_serving()
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


def _install_serving() -> None:
    # Request marks (gpuidle/_serving.py) for the rest of the process: they mark nothing while
    # nothing records.
    global _serving_installed
    if _serving_installed:
        return
    from . import _serving

    _serving_installed = True
    _serving.install()


def stop_at_exit() -> bool:
    """Stops the injected collection and writes its report; sitecustomize calls it from
    Python's atexit once this layer is active.

    The injected library stops at exit from a C ``atexit`` handler, which Python never reaches
    when the program ends by Ctrl-C: an unhandled KeyboardInterrupt makes the interpreter kill
    itself with SIGINT once it has finalised. Python's atexit runs before that, on every way
    out but ``os._exit`` and fatal signals. This is the very stop of the C handler (analysis,
    summary, outputs; CUPTI stays attached), which then finds nothing left to stop: one report.
    Nothing happens when nothing collects (no CUDA work, a forked child, torch.profiler took
    over) or when the collection is not the injected one (a profile stops its own). True if it
    stopped the collection.
    """
    try:
        state = _gpuidle.collection_state()
        if not (state["collecting"] and state["injected"]):
            return False
        _sampler.release()  # stopped and joined before the collection ends, as for a profile
        for stream in (sys.stdout, sys.stderr):  # the summary comes after the program's output
            if stream is not None:
                stream.flush()
        with _default_sigint():
            return _gpuidle.stop_collection_for_another_tool() is None
    except Exception:  # exiting: the C handler tries again, if anything is left to stop
        return False


class _default_sigint:
    """SIGINT as the C handler met it, Python's own handlers being gone by then: a second Ctrl-C
    while the report is being made ends the process at once, as it did without this stop."""

    def __enter__(self) -> None:
        self.previous = None
        try:
            if signal.getsignal(signal.SIGINT) not in (signal.SIG_IGN, None):
                self.previous = signal.signal(signal.SIGINT, signal.SIG_DFL)
        except (ValueError, OSError):  # not the main thread
            self.previous = None

    def __exit__(self, *exc: object) -> None:
        if self.previous is not None:
            try:
                signal.signal(signal.SIGINT, self.previous)
            except (ValueError, OSError):
                pass
