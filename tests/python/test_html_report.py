"""The HTML report from Python: Report.save("r.html"), to_html() and the notebook view are the
page that `gpuidle analyze --format html` writes (one renderer, lib/report/html_writer.cc)."""

from __future__ import annotations

import json
import re

import pytest

import gpuidle

from conftest import TORCH_TRACES, run_cli

DATA = re.compile(r'<script type="application/json" class="gpuidle-data">(.*?)</script>', re.S)


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
    assert page.count("<script") == 2  # the data and the page's own script


def test_an_unknown_format_names_html_among_the_formats(report):
    with pytest.raises(ValueError, match="html"):
        report.format("xml")
