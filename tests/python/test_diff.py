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


def test_an_unknown_keyword_is_a_type_error_even_with_two_reports():
    r = gpuidle.analyze(BEFORE)
    with pytest.raises(TypeError, match="diff\\(\\) got an unexpected keyword argument 'bad_kw'"):
        gpuidle.diff(r, r, bad_kw=1)


def test_an_unreadable_side_raises_what_analyze_raises(tmp_path):
    with pytest.raises(FileNotFoundError):
        gpuidle.diff(str(tmp_path / "missing.json"), AFTER)


LIVE = DATA_DIR / "traces" / "live_python"
STARVED = str(LIVE / "dataloader_starved.report.json")
TINY_MLP = str(LIVE / "tiny_mlp_launch_bound.report.json")


def test_two_different_programs_are_not_comparable():
    """Issue 4: 29 against 244 kernels per step was "the fix worked"."""
    d = gpuidle.diff(STARVED, TINY_MLP)
    assert d.comparable is False
    codes = [r["code"] for r in d.comparability["reasons"]]
    assert codes == ["kernels_per_step", "kernel_names"], d.comparability
    assert all(r["message"] for r in d.comparability["reasons"])
    assert d.to_dict()["verdict"]["outcome"] == "not_comparable"
    assert d.verdict.startswith("not comparable (kernels_per_step, kernel_names): ")
    assert "worked" not in d.summary() and "worked" not in repr(d)
    assert "NOT COMPARABLE" in d.summary()
    proc = run_cli("diff", "--format", "json", STARVED, TINY_MLP)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["comparability"] == d.comparability


def test_a_program_before_and_after_its_fix_is_comparable():
    d = gpuidle.diff(BEFORE, AFTER)
    assert d.comparable is True
    assert d.comparability["reasons"] == []
    assert d.comparability["kernel_names"]["shared"] >= 3
    r = gpuidle.analyze(STARVED)
    assert gpuidle.diff(r, r).comparable
