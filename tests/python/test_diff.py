"""gpuidle.diff(): did the fix work? The same comparison as `gpuidle diff` (one implementation,
lib/analysis/report_diff.cc), on the H200 runs before and after an advised fix."""

from __future__ import annotations

import json

import pytest

import gpuidle

from conftest import DATA_DIR, run_cli

GAINS = DATA_DIR / "gpu_runs" / "2026-12-02_gains"
BEFORE = str(GAINS / "item_sync.before.report.json")
AFTER = str(GAINS / "item_sync.after.report.json")


def test_the_diff_of_paths_is_the_cli_diff():
    d = gpuidle.diff(BEFORE, AFTER)
    for fmt, ours in (("text", d.summary()), ("json", d.to_json())):
        proc = run_cli("diff", "--format", fmt, BEFORE, AFTER)
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout == ours


def test_reports_and_paths_give_the_same_figures():
    from_paths = gpuidle.diff(BEFORE, AFTER).to_dict()
    from_reports = gpuidle.diff(gpuidle.analyze(BEFORE), gpuidle.analyze(AFTER)).to_dict()
    assert from_reports == from_paths


def test_the_verdict_names_the_cause_that_went_and_the_predicted_gain():
    d = gpuidle.diff(BEFORE, AFTER)
    assert "sync_bound.host_sync" in d.verdict
    assert d.to_dict()["verdict"]["outcome"] == "improved"
    resolved = [a for a in d.to_dict()["advice"] if a["subcause"] == "sync_bound.host_sync"]
    assert resolved, json.dumps(d.to_dict()["advice"])
    assert "host_sync" in repr(d)


def test_a_run_against_itself_is_unchanged():
    r = gpuidle.analyze(BEFORE)
    assert gpuidle.diff(r, r).to_dict()["verdict"]["outcome"] == "unchanged"


def test_an_unreadable_side_raises_what_analyze_raises(tmp_path):
    with pytest.raises(FileNotFoundError):
        gpuidle.diff(str(tmp_path / "missing.json"), AFTER)
