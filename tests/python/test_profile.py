"""gpuidle.profile() and the markers on a machine without a GPU: harmless, one warning, and the
same bookkeeping (nesting, steps, decorators, stopping) that a GPU run relies on."""

from __future__ import annotations

import threading

import pytest

import gpuidle
from gpuidle import _markers
from gpuidle._native import _gpuidle

from conftest import HAS_GPU, TORCH_TRACES, gpuidle_lines, no_gpu, run_python


# --- markers -----------------------------------------------------------------------------------

class NvtxStack:
    """Stands in for the native push/pop: records calls and checks they nest."""

    def __init__(self) -> None:
        self.calls: list[tuple] = []
        self.stack: list[tuple[int, str]] = []

    def push(self, kind: int, name: str = "") -> None:
        self.calls.append(("push", kind, name))
        self.stack.append((kind, name))

    def pop(self) -> None:
        assert self.stack, "pop without push"
        self.calls.append(("pop",))
        self.stack.pop()


@pytest.fixture
def nvtx(monkeypatch):
    fake = NvtxStack()
    monkeypatch.setattr(_markers, "_push", fake.push)
    monkeypatch.setattr(_markers, "_pop", fake.pop)
    yield fake
    gpuidle.end_step()
    assert not _markers._state.stack


STEP, DATA, USER = _gpuidle.MARKER_STEP, _gpuidle.MARKER_DATA, _gpuidle.MARKER_USER


def test_ranges_nest_and_close_in_order(nvtx):
    with gpuidle.range("outer"):
        with gpuidle.data():
            assert nvtx.stack == [(USER, "outer"), (DATA, "")]
    assert nvtx.calls == [("push", USER, "outer"), ("push", DATA, ""), ("pop",), ("pop",)]


def test_range_closes_when_the_block_raises(nvtx):
    with pytest.raises(KeyError):
        with gpuidle.range("r"):
            raise KeyError("x")
    assert nvtx.stack == []


def test_range_and_data_decorate_functions(nvtx):
    @gpuidle.range("work")
    def work(x):
        """Doubles x."""
        assert nvtx.stack == [(USER, "work")]
        return 2 * x

    @gpuidle.data("fetch")
    def fetch():
        return nvtx.stack[:]

    assert work(21) == 42 and work(1) == 2
    assert work.__name__ == "work" and work.__doc__ == "Doubles x."
    assert fetch() == [(DATA, "fetch")]
    assert nvtx.stack == [] and len(nvtx.calls) == 6


def test_one_range_object_can_be_entered_twice(nvtx):
    r = gpuidle.range("again")
    with r:
        with r:
            assert len(nvtx.stack) == 2
        assert len(nvtx.stack) == 1
    assert nvtx.stack == []


def test_steps_follow_each_other(nvtx):
    gpuidle.step()
    gpuidle.step()
    assert nvtx.stack == [(STEP, "")]
    gpuidle.end_step()
    assert nvtx.calls == [("push", STEP, ""), ("pop",), ("push", STEP, ""), ("pop",)]


def test_step_inside_a_range_keeps_the_range_open(nvtx):
    gpuidle.step()
    with gpuidle.range("r"):
        gpuidle.step()  # ends the step opened outside the range
        assert nvtx.stack == [(USER, "r"), (STEP, "")]
    assert nvtx.stack == [(STEP, "")]
    gpuidle.end_step()
    assert nvtx.stack == []


def test_step_as_a_context_manager_ends_at_the_block(nvtx):
    with gpuidle.step():
        assert nvtx.stack == [(STEP, "")]
    assert nvtx.stack == []
    gpuidle.step()
    with gpuidle.step():
        pass
    assert nvtx.stack == []


def test_each_thread_has_its_own_markers(nvtx):
    seen = {}

    def other():
        gpuidle.step()
        seen["other"] = list(_markers._state.stack)
        gpuidle.end_step()
        seen["after"] = list(_markers._state.stack)

    with gpuidle.range("main"):
        t = threading.Thread(target=other)
        t.start()
        t.join()
        assert [m.name for m in _markers._state.stack] == ["main"]
    assert [m.kind for m in seen["other"]] == [STEP] and seen["after"] == []


def test_markers_reach_the_native_library_without_a_collection():
    # The real NVTX calls: near free and harmless when nothing collects.
    for _ in range(1000):
        with gpuidle.range("r"), gpuidle.data():
            gpuidle.step()
    gpuidle.end_step()
    assert not _markers._state.stack


def test_bad_marker_arguments_are_type_errors():
    with pytest.raises(TypeError):
        gpuidle.range(3)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        gpuidle.data(b"x")  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        _gpuidle.push_marker(7, "")


# --- profile() ----------------------------------------------------------------------------------

@no_gpu
def test_profile_without_a_gpu_warns_once_and_raises_nothing():
    code = """
import gpuidle
with gpuidle.profile(out="never.json") as p:
    p.step()
    with gpuidle.data():
        pass
    with gpuidle.range("work"):
        p.step()
    inside = p.active
assert p.report is None and not p.active and not inside and p.error, (p.report, p.error)
print("ok")
"""
    proc = run_python(code)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "ok\n"
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("gpuidle: warning: ")


@no_gpu
def test_a_profile_started_again_and_again_warns_once():
    code = """
import gpuidle
@gpuidle.profile(quiet=True)
def step(i):
    return i
assert [step(i) for i in range(3)] == [0, 1, 2]
with gpuidle.profile(quiet=True):
    pass
print("ok")
"""
    proc = run_python(code)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "ok\n"
    assert len(gpuidle_lines(proc.stderr)) == 1, proc.stderr


@no_gpu
def test_no_second_warning_where_gpuidle_run_already_said_there_is_no_gpu():
    proc = run_python("import gpuidle\nwith gpuidle.profile() as p: pass\nprint(p.active)",
                      GPUIDLE_WARNED="1")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "False\n"
    assert gpuidle_lines(proc.stderr) == [], proc.stderr


@no_gpu
def test_bad_environment_is_one_warning_not_an_exception():
    proc = run_python("import gpuidle\nwith gpuidle.profile() as p: pass\nprint(p.error)",
                      GPUIDLE_BUFFER_MB="0")
    assert proc.returncode == 0, proc.stderr
    assert "GPUIDLE_BUFFER_MB" in proc.stdout
    assert gpuidle_lines(proc.stderr) == proc.stderr.splitlines()
    assert len(proc.stderr.splitlines()) == 1 and "GPUIDLE_BUFFER_MB=0" in proc.stderr


def test_profile_is_harmless_in_process(capfd):
    with gpuidle.profile(quiet=True) as p:
        assert p.active == (p.error is None)
        p.step()
    assert not p.active
    if not HAS_GPU:
        assert p.report is None
        # One warning per reason and process: an earlier test here may have printed it.
        assert len(capfd.readouterr().err.splitlines()) <= 1


def test_profile_decorates_with_and_without_parentheses():
    @gpuidle.profile
    def bare(x):
        return x + 1

    @gpuidle.profile(quiet=True)
    def configured(x):
        """Configured."""
        return x * 3

    assert bare(1) == 2 and configured(2) == 6 and configured(3) == 9
    assert configured.__doc__ == "Configured."
    assert isinstance(configured.profile, gpuidle.Profile)
    assert not configured.profile.active


def test_bad_keywords_fail_at_once():
    with pytest.raises(ValueError, match=r"format='xml'"):
        gpuidle.profile(format="xml")
    with pytest.raises(ValueError, match=r"buffer_mb='0'.*1 to 4096"):
        gpuidle.profile(buffer_mb=0)
    with pytest.raises(ValueError, match=r"out=.*%q"):
        gpuidle.profile(out="report.%q.json")
    with pytest.raises(ValueError, match="launch_gap_max_us"):
        gpuidle.profile(launch_gap_max_us=float("nan"))
    with pytest.raises(TypeError, match="max_gaps"):
        gpuidle.profile(max_gaps="3")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="quiet"):
        gpuidle.profile(quiet=1)  # type: ignore[arg-type]
    gpuidle.profile(out="r.%p.json", format="json", trace="t.json", quiet=True,
                    launch_gap_max_us=250.5, dispatch_latency_max_us=0, data_ranges=["a", "b"],
                    max_gaps=0, max_records=10, buffer_mb=4096)


@pytest.mark.parametrize("value", ["", " ", ",", "a,", "a, ,b", ["a", ""], ("",)])
def test_an_empty_data_range_fragment_is_refused_in_both_calls(value):
    for call in (gpuidle.profile, lambda **kw: gpuidle.analyze("unused.json", **kw)):
        with pytest.raises(ValueError, match=r"^data_ranges=.*: an empty fragment") as info:
            call(data_ranges=value)
        assert "\n" not in str(info.value)


def test_data_range_fragments_and_no_fragments_are_accepted():
    for value in ("a", "a,b", " a , b ", ["a", "b,c"], []):
        gpuidle.profile(data_ranges=value)


NUMBER_KEYWORDS = ["max_gaps", "skip_steps", "max_records", "buffer_mb", "launch_gap_max_us",
                   "dispatch_latency_max_us", "host_sample_ms"]


@pytest.mark.parametrize("keyword", NUMBER_KEYWORDS)
def test_an_int_too_long_to_write_out_is_refused_for_the_reason_a_huge_one_is(keyword):
    def refusal(value):
        with pytest.raises(ValueError) as info:
            gpuidle.profile(**{keyword: value})
        label, reason = str(info.value).split(": ", 1)
        return label, reason

    for sign in (1, -1):
        label, reason = refusal(sign * 10**5000)
        assert label.startswith(f"{keyword}=<") and "more than" in label and "digits>" in label
        assert ("negative" in label) == (sign < 0)
        assert reason == refusal(sign * 10**23)[1]
        assert len(str(label)) < 80


def test_an_int_subclass_is_given_as_its_number():
    import enum

    class Gaps(enum.IntEnum):
        FEW = 3

    assert gpuidle.profile(max_gaps=Gaps.FEW) is not None
    with pytest.raises(ValueError, match=r"^max_gaps='-1'"):
        gpuidle.profile(max_gaps=type("Neg", (int,), {"__repr__": lambda s: "x"})(-1))


class FakeNative:
    """Stands in for the native Profiler: a collection that works, without a GPU."""

    def __init__(self, report=None, print_summary=True, fail_start=None):
        self.starts = self.stops = 0
        self.collecting = False
        self._report = report
        self.print_summary = print_summary
        self.fail_start = fail_start
        self.written_report_path = "/somewhere/report.json"
        self.written_trace_path = ""

    def start(self):
        self.starts += 1
        if self.fail_start:
            return self.fail_start
        self.collecting = True
        return None

    def stop(self):
        assert self.collecting
        self.stops += 1
        self.collecting = False
        return None

    def report(self):
        return self._report


def test_nested_use_of_one_profile_collects_once():
    p = gpuidle.profile()
    fake = p._native = FakeNative()

    @p
    def recurse(n):
        assert p.active
        return recurse(n - 1) if n else "done"

    assert recurse(3) == "done"
    with p:
        with p:
            assert p.active
        assert p.active
    assert (fake.starts, fake.stops) == (2, 2) and not p.active


def test_a_failed_start_is_tried_once_per_outermost_use():
    p = gpuidle.profile()
    fake = p._native = FakeNative(fail_start="no GPU")
    with p:
        with p:
            pass
    assert fake.starts == 1 and fake.stops == 0
    assert p.error == "no GPU" and p.report is None


def test_stop_turns_the_native_report_into_a_report_and_prints_it(capsys):
    native = _gpuidle.analyze([str(TORCH_TRACES[0])], [])
    p = gpuidle.profile()
    p._native = FakeNative(report=native)
    with p:
        p.step()
    assert isinstance(p.report, gpuidle.Report)
    assert p.report.to_json() == native.format("json")
    err = capsys.readouterr().err
    assert err.startswith(native.format("text"))
    assert "gpuidle: report written to /somewhere/report.json" in err
    assert not _markers._state.stack  # the open step was closed before stopping

    quiet = gpuidle.profile()
    quiet._native = FakeNative(report=native, print_summary=False)
    with quiet:
        pass
    assert quiet.report is not None and capsys.readouterr().err == ""


def test_a_profile_still_running_at_exit_is_stopped_by_python():
    code = f"""
import gpuidle
from gpuidle._native import _gpuidle
sys_path = {str(TORCH_TRACES[0])!r}
class Fake:
    collecting = False
    print_summary = True
    written_report_path = written_trace_path = ""
    def start(self): self.collecting = True
    def stop(self, at_exit=False): self.collecting = False; print("stopped, at_exit", at_exit)
    def report(self): return _gpuidle.analyze([sys_path], [])
q = gpuidle.profile()  # stopped before the exit: CUPTI is detached for what follows
q._native = Fake()
q.start()
q.stop()
p = gpuidle.profile()
p._native = Fake()
p.start()
print("exiting")
"""
    proc = run_python(code)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == ["stopped, at_exit False", "exiting", "stopped, at_exit True"]
    assert "gpuidle: why the GPU was idle" in proc.stderr


def test_torch_hook_runs_only_when_torch_is_already_imported():
    code = """
import sys, types
import gpuidle
with gpuidle.profile(quiet=True):
    pass
assert "gpuidle._torch" not in sys.modules and "torch" not in sys.modules
sys.modules["torch"] = types.ModuleType("torch")
from gpuidle import _torch
calls = []
_torch.install = lambda p: calls.append(("install", p)) or True
_torch.uninstall = lambda: calls.append(("uninstall",))
with gpuidle.profile(quiet=True) as p:
    pass
assert calls == [("install", p), ("uninstall",)], calls
def broken(p):
    raise RuntimeError("boom")
_torch.install = broken
with gpuidle.profile(quiet=True) as p:
    pass
print("ok")
"""
    proc = run_python(code)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "ok\n"
    assert "gpuidle: warning: PyTorch integration failed (RuntimeError: boom)" in proc.stderr
    if not HAS_GPU:  # the no-GPU line once for the three profiles, plus the integration's
        assert len(gpuidle_lines(proc.stderr)) == 2, proc.stderr


@no_gpu
def test_a_refused_profile_leaves_a_running_ones_hooks_alone(monkeypatch):
    # A decorated function called inside `with gpuidle.profile()` is refused (one collection per
    # process); its start and stop must not undo the running profile's call sites and PyTorch
    # hooks. (Without a GPU every start is refused: a stand-in plays the running profile.)
    from gpuidle import _call_sites, _profile

    class Running:
        pass

    running = Running()
    calls = []
    monkeypatch.setattr(_call_sites, "enable", lambda: calls.append("enable"))
    monkeypatch.setattr(_call_sites, "disable", lambda: calls.append("disable"))
    monkeypatch.setattr(_profile.Profile, "_install_torch", lambda self: calls.append("install"))
    monkeypatch.setattr(_profile.Profile, "_uninstall_torch",
                        lambda self: calls.append("uninstall"))
    _profile._running.add(running)
    try:
        with gpuidle.profile(quiet=True) as p:
            pass
    finally:
        _profile._running.discard(running)
    assert not p.active and calls == []
