"""os._exit runs no exit handler: while a collection runs, gpuidle's wrapper stops it first (as
Python's atexit would), then exits with the status asked for; a forked child exits at once.

Without a GPU no collection can run, so a stand-in takes the place of a running profile in
gpuidle's list of them (``_profile._running``): what is checked here is that os._exit reaches
the stop, in the process that collects and only there. The stop itself is proven on the GPU
(docs/RELIABILITY.md, the fault rows ``exit os_exit``)."""

from __future__ import annotations

import subprocess
import sys

from conftest import python_env

CHILD = r"""
import os, sys
import gpuidle
from gpuidle import _os_exit, _profile

class StandIn:
    _depth = 0
    def _stop(self, at_exit):
        print("stopped at_exit=%s in %s" % (at_exit, "child" if os.getpid() != parent else "parent"), flush=True)

parent = os.getpid()
stand_in = StandIn()
_profile._running.add(stand_in)
_os_exit.install()
_os_exit.install()  # idempotent: one stop, not two
if sys.argv[1] == "fork":
    pid = os.fork()
    if pid == 0:
        os._exit(4)
    _, status = os.waitpid(pid, 0)
    print("child exit", os.waitstatus_to_exitcode(status), flush=True)
os._exit(7)
"""


def run(mode: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", CHILD, mode], capture_output=True, text=True,
                          timeout=60, env=python_env())


def test_os_exit_stops_the_running_collection_then_exits_as_asked():
    r = run("plain")
    assert r.returncode == 7, r.stderr
    assert r.stdout.splitlines() == ["stopped at_exit=True in parent"], r.stdout


def test_a_forked_child_exits_at_once():
    r = run("fork")
    assert r.returncode == 7, r.stderr
    assert r.stdout.splitlines() == ["child exit 4", "stopped at_exit=True in parent"], r.stdout
