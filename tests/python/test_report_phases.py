"""The Report's phases, one-off time, step source and warnings as Python values: the names the
native module gives, and a JSON report (schema gpuidle.report/2) made by hand read into them."""

from __future__ import annotations

import copy
import dataclasses
import json

import pytest

import gpuidle
from gpuidle._native import _gpuidle
from gpuidle._report import ONE_OFF_KINDS, PHASES, SUBCAUSES, OneOffTime, Report

from conftest import TORCH_TRACES

MS = 1_000_000


def test_the_names_come_from_the_engine_in_report_order():
    assert PHASES == ("start_up", "steady", "wind_down") == tuple(_gpuidle.PHASES)
    assert ONE_OFF_KINDS == ("cuda_init", "compilation", "module_load", "first_call",
                             "warm_up_step", "set_up", "wind_down", "gpu_busy", "records_lost",
                             "graph_capture", "no_demand")
    assert ONE_OFF_KINDS == tuple(_gpuidle.ONE_OFF_KINDS)
    assert "sync_bound.copy_wait" in SUBCAUSES and SUBCAUSES == gpuidle.SUBCAUSES
    assert SUBCAUSES.index("sync_bound.copy_wait") == SUBCAUSES.index("sync_bound.comm_wait") + 1
    assert SUBCAUSES.index("sync_bound.allocator") == SUBCAUSES.index("sync_bound.copy_wait") + 1
    assert all(isinstance(n, str) for n in PHASES + ONE_OFF_KINDS)


def _part(kind: str, ns: int, count: int = 1, evidence: str = "") -> dict:
    return {"kind": kind, "ns": ns, "count": count, "evidence": evidence}


def _idle(**by_subcause: int) -> tuple[dict, dict]:
    subs = {s: 0 for s in SUBCAUSES}
    for name, ns in by_subcause.items():
        subs[next(s for s in SUBCAUSES if s.endswith("." + name) or s == name)] = ns
    causes = {c: sum(ns for s, ns in subs.items() if s.split(".")[0] == c) for c in gpuidle.CAUSES}
    return causes, subs


def _document() -> dict:
    """A report of one device: start-up 20 ms, steady state 70 ms, wind-down 10 ms."""
    by_cause, by_subcause = _idle(host_sync=20 * MS, copy_wait=8 * MS)
    device = {
        "rank": None, "device": 0, "name": "NVIDIA H200", "window_ns": 100 * MS,
        "steady_start_ns": 20 * MS, "steady_end_ns": 90 * MS,
        "busy_ns": 40 * MS, "idle_ns": 28 * MS,
        "idle_by_cause": by_cause, "idle_by_subcause": by_subcause,
        "phases": {
            "start_up": {"start_ns": 0, "end_ns": 20 * MS, "ns": 20 * MS, "parts": [
                _part("compilation", 15 * MS, 3, "cuModuleLoadData"),
                _part("cuda_init", 4 * MS, 1, "cuInit"), _part("set_up", 1 * MS)]},
            "steady": {"start_ns": 20 * MS, "end_ns": 90 * MS, "ns": 70 * MS,
                       "one_off_ns": 2 * MS,
                       "parts": [_part("compilation", 2 * MS, 2, "triton_poi_fused_0")]},
            "wind_down": {"start_ns": 90 * MS, "end_ns": 100 * MS, "ns": 10 * MS, "parts": [
                _part("wind_down", 8 * MS), _part("gpu_busy", 2 * MS)]},
        },
        "kernel_count": 10, "memcpy_count": 2, "memset_count": 0, "comm_ns": 0,
        "exposed_comm_ns": 0, "comm_wait_ns": None,
    }
    return {
        "schema": "gpuidle.report/2", "generator": "gpuidle test", "source": "pytorch-profiler",
        "inputs": ["trace.json.gz"], "window": {"start_ns": 0, "end_ns": 100 * MS},
        "completeness": {"status": "unknown", "dropped_records": None,
                         "zero_timestamp_records": 0, "record_limit_reached": False},
        "visible_device_count": 1, "unused_devices": [],
        "step_source": "ProfilerStep", "warnings": ["3 events without \"ts\" skipped"],
        "start_up": {"rank": None, "device": 0, "ns": 20 * MS,
                     "parts": device["phases"]["start_up"]["parts"]},
        "wind_down": {"rank": None, "device": 0, "ns": 10 * MS,
                      "parts": device["phases"]["wind_down"]["parts"]},
        "devices": [device], "steps": [], "longest_gaps": [], "offenders": [], "advice": [],
        "options": {"launch_gap_max_ns": 1_000_000},
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


def test_one_off_time_is_plain_python_by_phase_then_most_first():
    d = _report(_document()).devices[0]
    assert d.one_off == [
        OneOffTime("start_up", "compilation", 15 * MS, 3, "cuModuleLoadData"),
        OneOffTime("start_up", "cuda_init", 4 * MS, 1, "cuInit"),
        OneOffTime("start_up", "set_up", 1 * MS, 1, ""),
        OneOffTime("steady", "compilation", 2 * MS, 2, "triton_poi_fused_0"),
        OneOffTime("wind_down", "wind_down", 8 * MS, 1, ""),
        OneOffTime("wind_down", "gpu_busy", 2 * MS, 1, ""),
    ]
    assert all(type(o.ns) is int and type(o.kind) is str for o in d.one_off)
    assert [o.kind for o in d.one_off_in("wind_down")] == ["wind_down", "gpu_busy"]
    with pytest.raises(ValueError, match="unknown phase 'startup'"):
        d.one_off_in("startup")
    with pytest.raises(dataclasses.FrozenInstanceError):
        d.one_off[0].ns = 0  # type: ignore[misc]


def test_the_headline_is_the_steady_state():
    r = _report(_document())
    d = r.devices[0]
    assert (d.steady_start_ns, d.steady_end_ns, d.steady_ns) == (20 * MS, 90 * MS, 70 * MS)
    assert (d.start_up_ns, d.wind_down_ns) == (20 * MS, 10 * MS)
    assert d.steady_one_off_ns == 2 * MS
    assert d.busy_ns + d.idle_ns + d.steady_one_off_ns == d.steady_ns
    assert d.start_up_ns + d.steady_ns + d.wind_down_ns == d.window_ns
    assert d.busy_share == pytest.approx(40 / 70) and d.idle_share == pytest.approx(28 / 70)
    assert d.idle_by_subcause["sync_bound.copy_wait"] == 8 * MS
    assert d.subcause_shares["sync_bound.copy_wait"] == pytest.approx(8 / 28)
    assert (r.start_up_ns, r.wind_down_ns) == (20 * MS, 10 * MS)


def test_step_source_and_warnings():
    r = _report(_document())
    assert r.step_source == "ProfilerStep"
    assert r.warnings == ['3 events without "ts" skipped']
    doc = _document()
    doc["step_source"], doc["warnings"] = "", []
    r = _report(doc)
    assert r.step_source == "" and r.warnings == []


def test_the_longest_start_up_of_several_devices():
    doc = _document()
    other = copy.deepcopy(doc["devices"][0])
    other["rank"] = 1
    other["phases"]["start_up"]["ns"] = 45 * MS
    doc["devices"].append(other)
    r = _report(doc)
    assert [d.start_up_ns for d in r.devices] == [20 * MS, 45 * MS]
    assert r.start_up_ns == 45 * MS
    assert _report({**_document(), "devices": []}).start_up_ns == 0


def test_an_analysed_trace_has_every_new_field():
    r = gpuidle.analyze(TORCH_TRACES[0])
    data = r.to_dict()
    assert data["schema"] == "gpuidle.report/2"
    assert r.step_source == data["step_source"] and r.warnings == data["warnings"]
    for d, want in zip(r.devices, data["devices"]):
        assert set(want["phases"]) == set(PHASES)
        assert (d.steady_start_ns, d.steady_end_ns) == (want["steady_start_ns"],
                                                        want["steady_end_ns"])
        assert d.busy_ns + d.idle_ns + d.steady_one_off_ns == d.steady_ns
