"""Sampled Python stacks: what the launching threads did during long stretches without CUDA.

A long stretch in which a thread that launches GPU work makes no CUDA call is host work
(``data_starved.host``); its Python stack says which: the input pipeline, compilation, logging,
checkpointing, framework glue. While a collection runs (a profile, or the injected collection of
``gpuidle run`` / ``LD_PRELOAD``), one daemon thread samples them:

- it sleeps in native code with the GIL released (``_gpuidle.HostSampleGate``) and wakes every
  ``GPUIDLE_HOST_SAMPLE_MS`` (default 5 ms; 0 = off); it looks at the Python stacks only when a
  thread that made a CUDA call in this collection is outside CUDA and has been for at least
  ``launch_gap_max`` (the collector keeps each thread's latest call; no per-call tracing, no
  ``sys.setprofile``), so a program busy launching never pays for a stack walk;
- then it reads ``sys._current_frames()`` for those threads and hands (OS thread id, time on the
  timeline's clock, stack) to the native session, which keeps at most 100,000 samples a
  collection (identical stacks once) and, at the stop, only those inside a stretch of at least
  ``launch_gap_max`` without a CUDA call of their thread (``Timeline::samples``);
- a stack is its frames as ``file:line function``, outermost first, one per line, at most
  :data:`MAX_FRAMES` (the innermost kept), ``file`` being the code object's ``co_filename``.

One sampler per process serves whichever collection runs: :func:`acquire` starts it (a profile
at its start, the autoload once), :func:`release` stops and joins it when the last user is done.
It never raises into the program, survives threads that end under it, stops at interpreter exit,
and never runs in a forked child.
"""

from __future__ import annotations

import atexit
import os
import sys
import threading
from typing import Any, Optional

from ._native import _gpuidle

#: Frames kept per stack (the innermost).
MAX_FRAMES = 32
_IDLE_NS = 50_000_000  # how often to look for a collection while none runs
_MAX_FRAME_TEXTS = 100_000

_lock = threading.Lock()
_users = 0
_gate: Optional[Any] = None
_thread: Optional[threading.Thread] = None
# (file, function, line) -> "file:line function"; keyed by names, so that no code object (of
# code that Dynamo or exec made) is kept alive by the cache.
_frame_texts: dict[tuple[str, str, int], str] = {}
_abandoned: list[Any] = []  # gates of a parent process (after fork): never touched again


def _frame_text(code: Any, line: int) -> str:
    key = (code.co_filename, code.co_name, line)
    text = _frame_texts.get(key)
    if text is None:
        text = f"{code.co_filename}:{line} {code.co_name}"
        if len(_frame_texts) < _MAX_FRAME_TEXTS:
            _frame_texts[key] = text
    return text


def format_stack(frame: Any) -> str:
    """A frame's stack as gpuidle stores it: "file:line function" lines, outermost first."""
    texts = []
    while frame is not None and len(texts) < MAX_FRAMES:
        texts.append(_frame_text(frame.f_code, frame.f_lineno or 0))
        frame = frame.f_back
    texts.reverse()
    return "\n".join(texts)


def sample(threads: list[int]) -> int:
    """Records the stacks of the threads with these OS ids now; returns how many it recorded."""
    idents = {t.native_id: t.ident for t in threading.enumerate()}
    time_ns = _gpuidle.timeline_clock_ns()
    frames = sys._current_frames()
    samples = []
    try:
        for tid in threads:
            ident = idents.get(tid)
            frame = frames.get(ident) if ident is not None else None
            if frame is not None:  # a thread that ended meanwhile, or one Python does not know
                samples.append((tid, format_stack(frame)))
    finally:
        del frames
    if samples:
        _gpuidle.record_host_samples(time_ns, samples)
    return len(samples)


# A thread away from CUDA for long (an idle notebook, a long evaluation) is sampled less and
# less often: after each further second away, half as often, down to one sample in 2**7 periods
# (under a second apart at 5 ms, so that a compiler's samples still join up).
_BACK_OFF_WAITS = 200
_BACK_OFF_MAX_LEVEL = 7


def due(streaks: dict[int, int], threads: list[int]) -> list[int]:
    """The threads to sample now, given how many periods in a row each has been offered."""
    for tid in [t for t in streaks if t not in threads]:
        del streaks[tid]
    out = []
    for tid in threads:
        n = streaks.get(tid, 0)
        streaks[tid] = n + 1
        level = min(_BACK_OFF_MAX_LEVEL, n // _BACK_OFF_WAITS)
        if n % (1 << level) == 0:
            out.append(tid)
    return out


def _run(gate: Any) -> None:
    streaks: dict[int, int] = {}
    try:
        while True:
            threads = gate.wait(_IDLE_NS)
            if threads is None:
                return
            threads = due(streaks, threads)
            if threads:
                sample(threads)
    except BaseException:  # interpreter shutdown, a torn-down module: the sampler just ends
        return


def running() -> bool:
    return _thread is not None and _thread.is_alive()


def acquire() -> None:
    """One more user of the sampler; the first starts it. Never raises."""
    global _users, _gate, _thread
    try:
        with _lock:
            _users += 1
            if _thread is not None:
                return
            gate = _gpuidle.HostSampleGate()
            thread = threading.Thread(target=_run, args=(gate,), name="gpuidle-host-sampler",
                                      daemon=True)
            thread.start()
            _gate, _thread = gate, thread
    except Exception:
        pass


def release(timeout: float = 2.0) -> None:
    """One user less; the last stops the sampler and waits for it."""
    global _users
    with _lock:
        _users = max(0, _users - 1)
        if _users:
            return
    _stop(timeout)


def _stop(timeout: float) -> None:
    global _gate, _thread
    with _lock:
        gate, thread = _gate, _thread
        _gate = _thread = None
    if gate is not None:
        gate.stop()
    if thread is not None and thread is not threading.current_thread():
        thread.join(timeout)


@atexit.register
def _stop_at_exit() -> None:
    global _users
    _users = 0
    try:
        _stop(2.0)
    except Exception:
        pass


def _after_fork_in_child() -> None:
    # The sampler thread does not exist in the child, and its gate's lock may be held there.
    global _users, _gate, _thread, _lock
    if _gate is not None:
        _abandoned.append(_gate)
    _users, _gate, _thread = 0, None, None
    _lock = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)
