"""Ctrl-C during a long analysis: gpuidle.analyze() raises KeyboardInterrupt at once (its
analysis runs on a thread of its own, which is abandoned), and ``python -m gpuidle analyze``
ends by SIGINT as the native command does, instead of either waiting for the analysis.

The trace is a pipe that the test feeds and never finishes: the analysis is reading and parsing
it when SIGINT comes, and would wait for the rest for ever. A child that had to finish the
analysis first would still be running when the time limit of communicate() is up."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

import gpuidle

from conftest import TORCH_TRACES, python_env

# A preloaded sanitizer runtime (cmake/ci_sanitizers.sh) breaks Python's own SIGINT: a plain
# Python program that sends itself SIGINT exits 0 there, gpuidle or not. The plain run is the
# proof of these tests.
pytestmark = pytest.mark.skipif(
    any(rt in os.environ.get("LD_PRELOAD", "") for rt in ("libasan", "libtsan")),
    reason="Python ignores SIGINT under a preloaded sanitizer runtime")

# Fed before SIGINT (more than a pipe holds, so the analysis has read some), and at most.
BYTES_BEFORE_SIGINT = 1 << 20
BYTES_AT_MOST = 16 << 20
HANG_LIMIT_S = 60  # a child still running by then waits for the analysis


def kernel_events():
    """Kineto kernel events, without end."""
    n = 0
    while True:
        n += 1
        yield (f'{{"ph": "X", "cat": "kernel", "name": "k{n % 97}", "pid": 0, "tid": 7, '
               f'"ts": {1000 + 3 * n}, "dur": 2, "args": {{"device": 0, "stream": 7, '
               f'"correlation": {n}}}}},\n').encode()


class EndlessTrace:
    """Writes a trace that never ends into a FIFO, from a thread; holds the FIFO open after
    BYTES_AT_MOST until close(). `started` is set once BYTES_BEFORE_SIGINT are written."""

    def __init__(self, path: Path) -> None:
        os.mkfifo(path)
        self.path = path
        self.started = threading.Event()
        self.done = threading.Event()
        self.reader_gone = threading.Event()  # the reader closed the FIFO
        self.written = 0
        self.thread = threading.Thread(target=self._feed, daemon=True)
        self.thread.start()

    def _feed(self) -> None:
        try:
            with open(self.path, "wb", buffering=0) as f:  # waits for the reader to open it
                f.write(b'{"traceEvents": [\n')
                chunk = []
                for event in kernel_events():
                    chunk.append(event)
                    if len(chunk) < 512:
                        continue
                    self.written += f.write(b"".join(chunk))
                    chunk.clear()
                    if self.written >= BYTES_BEFORE_SIGINT:
                        self.started.set()
                    if self.written >= BYTES_AT_MOST or self.done.is_set():
                        break
                self.started.set()
                self.done.wait()  # never the end of the trace while the child runs
        except BrokenPipeError:  # the reader went away
            self.reader_gone.set()
        except OSError:
            pass
        finally:
            self.started.set()

    def close(self) -> None:
        self.done.set()
        try:  # a writer still waiting for its reader gets one, and then its end of file
            fd = os.open(self.path, os.O_RDONLY | os.O_NONBLOCK)
            os.close(fd)
        except OSError:
            pass
        self.thread.join(10)


def interrupt_while_reading(argv: list[str], trace: EndlessTrace) -> subprocess.CompletedProcess:
    child = subprocess.Popen(argv, env=python_env(), stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
    try:
        assert trace.started.wait(HANG_LIMIT_S), "the child never read the trace"
        assert child.poll() is None, child.communicate()
        child.send_signal(signal.SIGINT)
        try:
            out, err = child.communicate(timeout=HANG_LIMIT_S)
        except subprocess.TimeoutExpired:
            child.kill()
            out, err = child.communicate()
            pytest.fail(f"still running {HANG_LIMIT_S} s after SIGINT: it waits for the "
                        f"analysis ({trace.written} bytes of trace read); stderr: {err[-500:]}")
        return subprocess.CompletedProcess(argv, child.returncode, out, err)
    finally:
        if child.poll() is None:
            child.kill()
            child.communicate()
        trace.close()


ANALYZE_PROGRAM = r"""
import sys, time, gpuidle
try:
    gpuidle.analyze(sys.argv[1])
except KeyboardInterrupt:
    print("KeyboardInterrupt from analyze", flush=True)
    if sys.argv[2] == "linger":
        time.sleep(60)  # alive while the test looks at the abandoned analysis
    if sys.argv[2] == "carry-on":
        # The abandoned analysis goes on in the background; the program is free to go on too.
        r = gpuidle.analyze(sys.argv[3])
        print("analysed again:", len(r.devices), "device(s)", flush=True)
        sys.exit(0)
    raise
print("analyze returned", flush=True)
"""


def test_ctrl_c_ends_analyze_at_once_with_keyboard_interrupt(tmp_path):
    trace = EndlessTrace(tmp_path / "endless.json")
    proc = interrupt_while_reading(
        [sys.executable, "-c", ANALYZE_PROGRAM, str(trace.path), "raise"], trace)
    # Python ends an unhandled KeyboardInterrupt by SIGINT, after its exit handlers: the
    # analysis thread, still reading, did not crash the exit.
    assert proc.returncode == -signal.SIGINT, proc.stderr
    assert proc.stdout == "KeyboardInterrupt from analyze\n"
    assert proc.stderr.rstrip().endswith("KeyboardInterrupt"), proc.stderr


def test_after_ctrl_c_the_program_goes_on_and_analyses_again(tmp_path):
    if not TORCH_TRACES:
        pytest.skip("no committed traces")
    trace = EndlessTrace(tmp_path / "endless.json")
    proc = interrupt_while_reading(
        [sys.executable, "-c", ANALYZE_PROGRAM, str(trace.path), "carry-on",
         str(TORCH_TRACES[0])], trace)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[0] == "KeyboardInterrupt from analyze"
    assert proc.stdout.splitlines()[1].startswith("analysed again: ")


def test_ctrl_c_ends_python_m_gpuidle_analyze_as_it_ends_the_native_command(tmp_path):
    trace = EndlessTrace(tmp_path / "endless.json")
    proc = interrupt_while_reading(
        [sys.executable, "-m", "gpuidle", "analyze", str(trace.path)], trace)
    assert proc.returncode == -signal.SIGINT, proc.stderr
    assert "Traceback" not in proc.stderr


def test_analyze_on_another_thread_than_main_still_works():
    # Only the main thread runs Python's signal handlers; elsewhere analyze just waits.
    if not TORCH_TRACES:
        pytest.skip("no committed traces")
    results = []
    worker = threading.Thread(target=lambda: results.append(gpuidle.analyze(TORCH_TRACES[0])))
    worker.start()
    worker.join(HANG_LIMIT_S)
    assert len(results) == 1
    assert results[0].to_dict() == gpuidle.analyze(TORCH_TRACES[0]).to_dict()


def test_the_abandoned_analysis_stops_reading(tmp_path):
    # Issue 29: after Ctrl-C the abandoned analysis went on to the end of its input, keeping a
    # core busy. Told to stop, it closes its input within a fraction of a second while the
    # program lives on; without the stop it would read on until the feeder's 16 MiB.
    trace = EndlessTrace(tmp_path / "endless.json")
    child = subprocess.Popen([sys.executable, "-c", ANALYZE_PROGRAM, str(trace.path), "linger"],
                             env=python_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True)
    try:
        assert trace.started.wait(HANG_LIMIT_S), "the child never read the trace"
        child.send_signal(signal.SIGINT)
        assert child.stdout.readline() == "KeyboardInterrupt from analyze\n"
        assert trace.reader_gone.wait(10), (
            f"the abandoned analysis still reads: {trace.written} bytes fed")
        assert child.poll() is None  # the program itself goes on
        assert trace.written < BYTES_AT_MOST
    finally:
        child.kill()
        child.communicate()
        trace.close()
