"""The host-stack sampler (gpuidle/_sampler.py): stacks of busy threads, bounded, and a thread
that starts and stops cleanly. Without a GPU nothing collects, so the native side keeps no
samples here; tests/session/host_samples_test.cc checks what it keeps, and the collector test
which threads it offers."""

from __future__ import annotations

import os
import threading
import time

import pytest

from gpuidle import _sampler
from gpuidle._native import _gpuidle
from conftest import run_python


def busy_in_a_known_function(started: threading.Event, stop: list) -> None:
    started.set()
    n = 0
    while not stop:  # no Python call inside the loop: the innermost frame is always this one
        n += 1


@pytest.fixture
def busy_thread():
    started, stop = threading.Event(), []
    thread = threading.Thread(target=busy_in_a_known_function, args=(started, stop))
    thread.start()
    started.wait(5)
    time.sleep(0.01)  # out of Event.set and into the loop
    yield thread
    stop.append(True)
    thread.join(5)


def test_a_busy_threads_stack_ends_in_the_function_it_is_busy_in(busy_thread):
    frame = __import__("sys")._current_frames()[busy_thread.ident]
    stack = _sampler.format_stack(frame).split("\n")
    del frame
    assert stack[-1].startswith(f"{__file__}:")
    assert stack[-1].endswith(" busy_in_a_known_function")
    assert stack[0].endswith(" _bootstrap"), "outermost first"
    file, rest = stack[-1].rsplit(":", 1)
    assert rest.split(" ")[0].isdigit()


def test_sampling_a_thread_by_its_os_id_records_it_and_skips_threads_that_ended(busy_thread):
    assert _sampler.sample([busy_thread.native_id]) == 1
    ended = threading.Thread(target=lambda: None)
    ended.start()
    ended.join()
    assert _sampler.sample([ended.native_id, 999_999_999]) == 0


def test_a_thread_away_from_cuda_for_long_is_sampled_less_and_less_often():
    streaks = {}
    picked = [bool(_sampler.due(streaks, [7])) for _ in range(200 * 9)]
    assert all(picked[:200]), "every period in its first second away"
    assert sum(picked[200:400]) == 100 and sum(picked[1400:1600]) == 200 // 128 + 1
    assert _sampler.due(streaks, [8]) == [8], "a thread newly away is sampled at once"
    assert 7 not in streaks, "a thread that came back starts afresh"


def test_stacks_keep_the_innermost_frames(busy_thread):
    def deep(n):
        if n == 0:
            return _sampler.format_stack(__import__("sys")._getframe())
        return deep(n - 1)

    stack = deep(100).split("\n")
    assert len(stack) == _sampler.MAX_FRAMES
    assert all(line.endswith(" deep") for line in stack)


def test_the_sampler_thread_starts_once_and_stops_and_joins_with_its_last_user():
    assert not _sampler.running()
    _sampler.acquire()
    _sampler.acquire()
    thread = _sampler._thread
    assert thread is not None and thread.is_alive() and thread.daemon
    _sampler.release()
    assert thread.is_alive(), "one user left"
    _sampler.release()
    assert not thread.is_alive(), "stopped and joined"
    assert not _sampler.running()


def test_the_gate_returns_nothing_to_sample_while_nothing_collects():
    gate = _gpuidle.HostSampleGate()
    result = []
    waiter = threading.Thread(target=lambda: result.append(gate.wait(1_000_000)))
    waiter.start()
    time.sleep(0.05)  # a few idle periods: nothing collects, so it keeps waiting
    assert waiter.is_alive()
    gate.stop()
    waiter.join(2)
    assert result == [None]
    assert _gpuidle.collection_state()["collecting"] is False


def test_a_forked_child_never_runs_the_sampler():
    code = """
import os
from gpuidle import _sampler
_sampler.acquire()
pid = os.fork()
if pid == 0:
    os._exit(0 if _sampler._thread is None and not _sampler.running() else 1)
_, status = os.waitpid(pid, 0)
_sampler.release()
print(os.WEXITSTATUS(status), _sampler.running())
"""
    proc = run_python(code)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["0", "False"]
    assert proc.stderr == ""


def test_the_interpreter_exits_with_the_sampler_running():
    proc = run_python("from gpuidle import _sampler; _sampler.acquire(); print('bye')")
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "bye\n", "")


def test_the_sample_period_is_a_keyword_with_the_variables_rules():
    import gpuidle

    gpuidle.profile(host_sample_ms=0)  # off
    gpuidle.profile(host_sample_ms=2.5)
    with pytest.raises(ValueError, match="host_sample_ms"):
        gpuidle.profile(host_sample_ms=-1)
    with pytest.raises(TypeError):
        gpuidle.profile(host_sample_ms="5")
