"""Report.coverage: None for every report but a sampled collection's, whose windows, traced time
and span it gives; and the steady state of a sampled report is the windows' time, not the span
between its first and last window. A sampled report needs a GPU (tests/gpu/python/
sampled_collection.py makes one); here a JSON report made by hand stands in for it."""

from __future__ import annotations

import copy
import dataclasses
import json

import pytest

import gpuidle
from gpuidle._native import _gpuidle
from gpuidle._report import SUBCAUSES, Coverage, Report

from conftest import LIVE_TRACES, TORCH_TRACES

S = 1_000_000_000
MS = 1_000_000


def _document() -> dict:
    """A sampled report of one device: 5 windows of 1 s each over 17 s, each 0.6 s busy and
    0.4 s idle (host_sync), the steady states summing to 4.9 s within a span of 16.9 s."""
    subs = {s: 0 for s in SUBCAUSES}
    subs["sync_bound.host_sync"] = 1900 * MS
    causes = {c: sum(ns for s, ns in subs.items() if s.split(".")[0] == c) for c in gpuidle.CAUSES}
    device = {
        "rank": None, "device": 0, "name": "NVIDIA H200", "window_ns": 5 * S,
        "steady_start_ns": 50 * MS, "steady_end_ns": 16_950 * MS,
        "busy_ns": 3000 * MS, "idle_ns": 1900 * MS,
        "idle_by_cause": causes, "idle_by_subcause": subs,
        "phases": {
            "start_up": {"start_ns": 0, "end_ns": 50 * MS, "ns": 50 * MS, "parts": []},
            "steady": {"start_ns": 50 * MS, "end_ns": 16_950 * MS, "ns": 4900 * MS,
                       "one_off_ns": 0, "parts": []},
            "wind_down": {"start_ns": 16_950 * MS, "end_ns": 17 * S, "ns": 50 * MS,
                          "parts": []},
        },
        "kernel_count": 50_000, "memcpy_count": 0, "memset_count": 0, "comm_ns": 0,
        "exposed_comm_ns": 0, "comm_wait_ns": None, "step_count": 600,
    }
    return {
        "schema": "gpuidle.report/2", "generator": "gpuidle test", "source": "gpuidle",
        "inputs": ["live capture"], "window": {"start_ns": 0, "end_ns": 17 * S},
        "completeness": {"status": "complete", "dropped_records": 0,
                         "zero_timestamp_records": 0, "record_limit_reached": False},
        "coverage": {"windows": 5, "traced_ns": 5 * S, "span_ns": 17 * S},
        "visible_device_count": 1, "unused_devices": [], "step_source": "optimizer.step",
        "warnings": [], "devices": [device], "steps": [], "longest_gaps": [], "offenders": [],
        "advice": [], "options": {},
    }


class _Native:
    """Stands in for the native report: gives back the JSON it was made with."""

    def __init__(self, document: dict) -> None:
        self._json = json.dumps(document)

    def format(self, format: str) -> str:
        assert format == "json"
        return self._json

    def summary_json(self) -> str:  # its JSON has no collective timing tables to leave out
        return self._json


def _report(document: dict) -> Report:
    return Report._from_native(_Native(document))


def test_a_sampled_report_states_its_coverage():
    c = _report(_document()).coverage
    assert c == Coverage(windows=5, traced_ns=5 * S, span_ns=17 * S)
    assert all(type(v) is int for v in (c.windows, c.traced_ns, c.span_ns))
    assert (c.traced_s, c.span_s) == (5.0, 17.0)
    assert c.traced_share == pytest.approx(5 / 17)
    assert str(c) == "sampled 29.4% of 17.0 s in 5 windows"
    with pytest.raises(dataclasses.FrozenInstanceError):
        c.windows = 6  # type: ignore[misc]


def test_one_window_and_an_empty_span():
    doc = _document()
    doc["coverage"] = {"windows": 1, "traced_ns": 0, "span_ns": 0}
    c = _report(doc).coverage
    assert c is not None and c.traced_share == 0.0
    assert str(c) == "sampled 0.0% of 0.0 s in 1 window"


def test_the_steady_state_of_a_sampled_report_is_the_windows_time():
    d = _report(_document()).devices[0]
    # The span from the first window's steady start to the last one's end includes the 12 s
    # between the windows; the phases give the time the windows traced.
    assert d.steady_end_ns - d.steady_start_ns == 16_900 * MS
    assert d.steady_ns == 4900 * MS
    assert d.busy_ns + d.idle_ns + d.steady_one_off_ns == d.steady_ns
    assert d.busy_share == pytest.approx(3000 / 4900)
    assert d.idle_share == pytest.approx(1900 / 4900)
    assert d.start_up_ns + d.steady_ns + d.wind_down_ns == d.window_ns
    # The device's fields are still the report's figures alone.
    assert set(dataclasses.asdict(d)) == {f.name for f in dataclasses.fields(d)}
    assert not any(name.startswith("_") for name in dataclasses.asdict(d))


def test_repr_says_it_is_sampled():
    r = _report(_document())
    assert repr(r) == ("<gpuidle.Report gpuidle: GPU 0 idle 38.8% (sync_bound.host_sync); "
                       "sampled 29.4% of 17.0 s in 5 windows>")


def test_a_report_without_coverage_says_nothing_of_windows():
    doc = _document()
    del doc["coverage"]
    r = _report(doc)
    assert r.coverage is None
    assert "sampled" not in repr(r)
    assert r.to_dict().get("coverage") is None


def test_coverage_round_trips_through_to_dict():
    doc = _document()
    r = _report(doc)
    assert r.to_dict()["coverage"] == doc["coverage"]
    other = copy.deepcopy(doc)
    other["coverage"]["windows"] = 7
    assert _report(other).coverage.windows == 7 and r.coverage.windows == 5


@pytest.mark.parametrize("trace", (TORCH_TRACES[:1] + LIVE_TRACES[:1]),
                         ids=lambda p: p.name)
def test_an_analysed_trace_is_not_sampled(trace):
    r = gpuidle.analyze(trace)
    assert r.coverage is None and r._native.coverage is None
    assert "coverage" not in r.to_dict()
    assert "sampled" not in r.summary() and "sampled" not in repr(r)
    # Without coverage the steady state is the span, as it always was.
    for d in r.devices:
        assert d.steady_ns == d.steady_end_ns - d.steady_start_ns


def test_the_native_report_has_the_coverage_property():
    assert isinstance(getattr(_gpuidle.NativeReport, "coverage", None), property)
