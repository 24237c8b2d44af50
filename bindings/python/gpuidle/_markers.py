"""Markers: host ranges on the calling thread that gpuidle's analysis reads.

They are NVTX ranges in the domain "gpuidle" (Nsight Systems shows them too) and cost one NVTX
call when nothing collects, so they are safe to leave in code that runs without a GPU or without
a profile. NVTX ranges nest per thread: each thread keeps its own stack of the markers opened
through this module, so that a marker closed out of order (a step ended inside a range) closes
only itself and the ranges opened after it carry on.
"""

from __future__ import annotations

import functools
import threading
from typing import Any, Callable, Optional, TypeVar

from ._native import _gpuidle

F = TypeVar("F", bound=Callable[..., Any])

_push = _gpuidle.push_marker
_pop = _gpuidle.pop_marker
_STEP: int = _gpuidle.MARKER_STEP
_DATA: int = _gpuidle.MARKER_DATA
_USER: int = _gpuidle.MARKER_USER
_CALL_SITE: int = _gpuidle.MARKER_CALL_SITE
#: Whether a collection records now. gpuidle's own markers (gpuidle/_torch.py) ask it first and
#: build no name and walk no frame while nothing records: their ranges would be lost anyway.
recording: Callable[[], bool] = getattr(_gpuidle, "recording", lambda: True)


class _Open:
    """One open marker on one thread."""

    __slots__ = ("kind", "name", "owner")

    def __init__(self, kind: int, name: str, owner: object) -> None:
        self.kind = kind
        self.name = name
        self.owner = owner


class _ThreadState(threading.local):
    def __init__(self) -> None:
        self.stack: list[_Open] = []
        self.step: Optional[_Open] = None


_state = _ThreadState()
#: True once the program marked a step itself (gpuidle.step, Profile.step): gpuidle then marks
#: no optimizer steps of its own (gpuidle/_torch.py).
user_steps = False
#: Called on the thread of the program's first step before it opens (gpuidle/_torch.py closes
#: its optimizer step there, so that the program's step is one range).
before_first_user_step: Optional[Callable[[], None]] = None


def _open(kind: int, name: str, owner: object) -> _Open:
    _push(kind, name)
    marker = _Open(kind, name, owner)
    _state.stack.append(marker)
    return marker


def _close(marker: Optional[_Open]) -> None:
    """Closes marker if it is open on this thread; markers opened after it stay open."""
    stack = _state.stack
    # (This module defines gpuidle.range: the builtin is not used here.)
    i = len(stack) - 1
    while i >= 0 and stack[i] is not marker:
        i -= 1
    if i < 0:
        return
    above = stack[i + 1:]
    for _ in above:
        _pop()
    _pop()
    del stack[i:]
    for m in above:  # NVTX pops only the innermost range: reopen what was above
        _push(m.kind, m.name)
        stack.append(m)


def _close_latest_of(owner: object) -> None:
    for marker in reversed(_state.stack):
        if marker.owner is owner:
            _close(marker)
            return


class _Range:
    __slots__ = ("_kind", "_name")

    def __init__(self, kind: int, name: str) -> None:
        self._kind = kind
        self._name = name

    def __enter__(self) -> "_Range":
        _open(self._kind, self._name, self)
        return self

    def __exit__(self, *exc: object) -> None:
        _close_latest_of(self)

    def __call__(self, func: F) -> F:
        """Used as a decorator: each call of func runs inside the range."""

        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with self:
                return func(*args, **kwargs)

        return wrapper  # type: ignore[return-value]

    def __repr__(self) -> str:
        kind = {_STEP: "step", _DATA: "data", _USER: "range"}.get(self._kind, "?")
        return f"gpuidle.{kind}({self._name!r})"


class range(_Range):  # noqa: A001  (gpuidle.range, as in the issue's API)
    """A named region of the program, shown in traces::

        with gpuidle.range("forward"):
            loss = model(batch)

        @gpuidle.range("evaluate")
        def evaluate(): ...

    An NVTX range whose name contains one of the data patterns (``DataLoader``, ``data_load``,
    ...; see ``profile(data_ranges=...)``) counts as a data wait, like :class:`data`.
    """

    __slots__ = ()

    def __init__(self, name: str) -> None:
        if not isinstance(name, str):
            raise TypeError(f"range name must be a str, not {type(name).__name__}")
        super().__init__(_USER, name)


class data(_Range):
    """The thread waits for input: GPU idle time meanwhile is ``data_starved.dataloader``::

        with gpuidle.data():
            batch = next(loader_iter)

    Also a decorator (``@gpuidle.data()``) for a function that fetches input.
    """

    __slots__ = ()

    def __init__(self, name: Optional[str] = None) -> None:
        if name is not None and not isinstance(name, str):
            raise TypeError(f"data name must be a str, not {type(name).__name__}")
        super().__init__(_DATA, name or "")


class StepHandle:
    """The step that :func:`step` began; ``with`` ends it at the end of the block."""

    __slots__ = ("_marker",)

    def __init__(self, marker: _Open) -> None:
        self._marker = marker

    def __enter__(self) -> "StepHandle":
        return self

    def __exit__(self, *exc: object) -> None:
        if _state.step is self._marker:
            end_step()


def step() -> StepHandle:
    """Ends this thread's current step, if any, and begins the next one.

    Call it once per iteration of a training or serving loop (like ``torch.profiler``'s
    ``prof.step()``), or use it as ``with gpuidle.step():`` around one iteration. Each step gets
    its own row in the report.
    """
    global user_steps
    if not user_steps:
        user_steps = True
        if before_first_user_step is not None:
            try:
                before_first_user_step()
            except Exception:
                pass
    end_step()
    marker = _open(_STEP, "", step)
    _state.step = marker
    return StepHandle(marker)


def end_step() -> None:
    """Ends this thread's current step (``profile`` does it when it stops)."""
    marker = _state.step
    if marker is not None:
        _state.step = None
        _close(marker)
