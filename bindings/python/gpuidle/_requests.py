"""Serving requests: ``gpuidle.request()``.

A request is an NVTX start/end range of the domain "gpuidle" named ``gpuidle.request:<id>``
(``gpuidle.request`` without an id), from its arrival to its response, and the part of it the
server worked on, ``gpuidle.request_run:<id>``, from :meth:`Request.running` to its end. The
analysis tells GPU idle time with no request in flight (no demand) from idle time while requests
waited. Start/end ranges, not the per-thread push/pop stack of gpuidle/_markers.py: a request may
end on another thread or in another asyncio task than it began in.

This module also keeps the *current* request of each thread and asyncio task (a ContextVar), so
that gpuidle's automatic marks (gpuidle/_serving.py: transformers' ``generate()``) can mark the
run of the request they serve.
"""

from __future__ import annotations

import contextvars
import functools
import inspect
from typing import Any, Callable, Optional, TypeVar, Union, overload

from ._native import _gpuidle

F = TypeVar("F", bound=Callable[..., Any])

# The native calls, by name here so that tests can stand in for them. start returns a handle (0:
# nobody would see the request, as when nothing records); the others ignore unknown handles.
_start: Callable[[str], int] = _gpuidle.start_request
_running: Callable[[int], None] = _gpuidle.request_running
_end: Callable[[int], None] = _gpuidle.end_request

#: The innermost request open in this thread or asyncio task (a ContextVar: each thread has its
#: own, each task a copy of its creator's).
_current: contextvars.ContextVar[Optional["Request"]] = contextvars.ContextVar(
    "gpuidle_request", default=None)


def current() -> Optional["Request"]:
    """The innermost request of this thread or task that records (started while something
    would see it, not ended yet), or None."""
    r = _current.get()
    while r is not None and not r._handle:
        r = r._previous
    return r


def _id_text(id: Union[str, int, None]) -> str:
    if id is None:
        return ""
    if isinstance(id, bool) or not isinstance(id, (str, int)):
        raise TypeError(f"request id must be str or int, not {type(id).__name__}")
    return str(id)


class Request:
    """One request: from :meth:`start` (its arrival) to :meth:`end` (its response); the server
    works on it from :meth:`running`. ``with`` starts and ends it and makes it the current
    request of the thread or task meanwhile. Never raises once made; any thread may end it."""

    __slots__ = ("id", "_handle", "_started", "_previous", "__weakref__")

    def __init__(self, id: Union[str, int, None] = None) -> None:
        #: The id in the range names ("" for none).
        self.id: str = _id_text(id)
        self._handle = 0
        self._started = False
        self._previous: Optional[Request] = None

    def start(self) -> "Request":
        """The request arrived now (once: a second call does nothing)."""
        if not self._started:
            self._started = True
            self._handle = _start(self.id)
        return self

    def running(self) -> None:
        """The server takes the request up now: its run begins, and ends with it. Once: later
        calls do nothing (the native call ignores them)."""
        if self._handle:
            _running(self._handle)

    def end(self) -> None:
        """The request was answered now: its ranges end. Later calls do nothing."""
        handle, self._handle = self._handle, 0
        if handle:
            _end(handle)

    def __enter__(self) -> "Request":
        self.start()
        self._previous = _current.get()
        _current.set(self)
        return self

    def __exit__(self, *exc: object) -> None:
        self.end()
        # Only if still current: a request ended out of order leaves the ones opened after it.
        if _current.get() is self:
            _current.set(self._previous)
        self._previous = None

    def __call__(self, func: F) -> F:
        """Used as a decorator: each call of func is one request with this id (an ``async def``
        function's request lasts until its coroutine finishes)."""
        return _decorate(func, self.id)

    def __repr__(self) -> str:
        return f"gpuidle.request({self.id!r})" if self.id else "gpuidle.request()"


def _decorate(func: F, id: str) -> F:
    if inspect.iscoroutinefunction(func):

        @functools.wraps(func)
        async def async_wrapper(*args: Any, **kwargs: Any) -> Any:
            with Request(id or None):
                return await func(*args, **kwargs)

        return async_wrapper  # type: ignore[return-value]

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        with Request(id or None):
            return func(*args, **kwargs)

    return wrapper  # type: ignore[return-value]


@overload
def request(id: Union[str, int, None] = None) -> Request: ...
@overload
def request(id: F) -> F: ...


def request(id: Any = None) -> Any:
    """One serving request, from its arrival to its response::

        with gpuidle.request(id=req.id) as r:   # arrived
            batch = queue.wait_for_slot(req)     # waits: GPU idle now is not "no demand"
            r.running()                          # taken up: the server works on it
            out = model.generate(**batch)

        @gpuidle.request                         # each call is one request
        def handle(req): ...

        @gpuidle.request(id="health")            # each call one request named with the id
        async def health(): ...

    ``id`` (str or int, optional) names the ranges ``gpuidle.request:<id>`` and
    ``gpuidle.request_run:<id>``. ``running()`` marks when the server took the request up (its
    *run*, which ends with the request); without it the request has no run. For requests that
    cross threads or callbacks, ``r = gpuidle.request(id).start()`` and ``r.running()`` /
    ``r.end()`` from any thread. Start/end ranges, so threads and asyncio tasks may interleave
    requests freely. Near free and harmless when nothing collects; Nsight Systems shows the
    ranges (NVTX domain "gpuidle").
    """
    if callable(id) and not isinstance(id, (str, int)):
        return _decorate(id, "")  # bare @gpuidle.request
    return Request(id)
