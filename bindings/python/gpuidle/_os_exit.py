"""``os._exit`` runs no exit handler, so a program that ends with it (a launcher's workers, a
script that skips the interpreter's slow teardown) would leave no report. While a collection
runs in this process, ``os._exit`` first stops it as Python's atexit would (analysis, summary,
outputs), then exits as asked. A forked child (a DataLoader or multiprocessing worker, which
ends with ``os._exit``) collects nothing and exits at once. SIGTERM and the other terminating
signals are the C++ side's (core/termination_signals.h); C's ``_exit`` cannot be seen.
"""

from __future__ import annotations

import functools
import os
import threading
from typing import Any, Callable, Optional

_lock = threading.Lock()
_real_exit: Optional[Callable[[int], Any]] = None
_pid = 0


def install() -> None:
    """Wraps os._exit once per process (idempotent)."""
    global _real_exit, _pid
    with _lock:
        if _real_exit is not None and _pid == os.getpid():
            return
        real = _real_exit if _real_exit is not None else os._exit
        _real_exit, _pid = real, os.getpid()

        @functools.wraps(real)
        def _exit(n: int, /) -> Any:
            if os.getpid() == _pid:
                _stop_collections()
            return real(n)

        os._exit = _exit


def _stop_collections() -> None:
    try:
        from . import _profile

        _profile._stop_running_profiles()
    except BaseException:  # exiting as asked whatever happens here
        pass
    try:
        from . import _autoload

        _autoload.stop_at_exit()
    except BaseException:
        pass
