"""The HTML report from Python: Report.save("r.html"), to_html() and the notebook view are the
page that `gpuidle analyze --format html` writes (one renderer, lib/report/html_writer.cc)."""

from __future__ import annotations

import json
import re

import pytest

import gpuidle

from conftest import TORCH_TRACES, run_cli

DATA = re.compile(r'<script type="application/json" class="gpuidle-data">(.*?)</script>', re.S)
PAGE = re.compile(r'<script type="application/json" class="gpuidle-page">(.*?)</script>', re.S)


@pytest.fixture(scope="module")
def trace():
    return str(next(t for t in TORCH_TRACES if t.name.startswith("mixed_resnet")))


@pytest.fixture(scope="module")
def report(trace):
    return gpuidle.analyze(trace)


def test_the_notebook_view_and_to_html_are_the_cli_page(report, trace):
    proc = run_cli("analyze", "--format", "html", trace)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("<!DOCTYPE html>")
    assert report.to_html() == proc.stdout
    assert report._repr_html_() == proc.stdout
    assert report.format("html") == proc.stdout


def test_save_writes_the_page_for_an_html_name(report, tmp_path):
    for name in ("r.html", "r.HTM"):
        path = tmp_path / name
        assert report.save(path) == str(path)
        assert path.read_text() == report.to_html()
    report.save(tmp_path / "forced.txt", "html")
    assert (tmp_path / "forced.txt").read_text() == report.to_html()


def test_the_page_embeds_the_report_and_requests_nothing(report):
    page = report.to_html()
    embedded = json.loads(DATA.search(page).group(1))
    data = report.to_dict()
    for key in ("schema", "source", "longest_gaps", "offenders", "advice", "steps"):
        assert embedded[key] == data[key], key
    for got, want in zip(embedded["devices"], data["devices"]):
        assert got["idle_by_subcause"] == want["idle_by_subcause"]
        assert got["timeline"] == want["timeline"]
        tl = got["timeline"]
        assert 0 < len(tl["busy_ns"]) <= 600
        # The causes' bins add up to the device's idle time by cause.
        for cause, ns in want["idle_by_cause"].items():
            assert sum(tl["idle_ns"][cause]) == ns, cause
    for external in ("http://", "https://", "<link", "url(", "<iframe"):
        assert external not in page
    assert page.count("<script") == 3  # the report, the page's own data and the page's script


def test_an_unknown_format_names_html_among_the_formats(report):
    with pytest.raises(ValueError, match="html"):
        report.format("xml")


def test_the_page_names_one_off_kinds_as_the_text_outputs_do(report):
    names = json.loads(PAGE.search(report.to_html()).group(1))
    assert names["one_off_labels"]["set_up"] == "set-up"
    assert names["one_off_labels"]["cuda_init"] == "CUDA init"
    assert names["steady_one_off_labels"]["compilation"] == "re-compilation"


def test_a_two_rank_page_carries_the_waits_it_draws():
    """The straggler job: rank 0 waits for rank 1 most of its steady state; the page's data has
    the device's and each step's wait, which the script draws in the waiting colour, and the
    figures its cards take as lost time (docs/HTML_REPORT.md)."""
    traces = [str(t) for t in TORCH_TRACES if t.name.startswith("nccl_straggler.rank")]
    assert len(traces) == 2
    proc = run_cli("analyze", "--format", "html", *traces)
    assert proc.returncode == 0, proc.stderr
    embedded = json.loads(DATA.search(proc.stdout).group(1))
    waited = max(embedded["devices"], key=lambda d: d.get("comm_wait_ns") or 0)
    steady = waited["phases"]["steady"]["ns"]
    assert waited["comm_wait_ns"] > steady / 2
    steps = [s for s in embedded["steps"] if s["rank"] == waited["rank"]]
    assert steps and sum(s.get("comm_wait_ns", 0) for s in steps) > 0
    # Every advice row has its share of the steady state; a healthy run would have a verdict.
    for a in embedded["advice"]:
        assert 0 <= a.get("share_of_steady_state", 0) <= 1
    assert "verdict" not in embedded or embedded["verdict"]["worth_fixing"]
    script = proc.stdout.split('class="gpuidle-page">', 1)[1]
    assert "waiting for peers" in script and "of the steady state" in script
    assert "of lost time" not in script
