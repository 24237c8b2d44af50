"""The Python keywords against gpuidle's one option table (lib/session/option_table.h), which
the native module lists: every keyword of gpuidle.profile() and gpuidle.analyze() is a setting of
the table that applies there, and every such setting is a keyword."""

from __future__ import annotations

import inspect
import json

import pytest

import gpuidle
from gpuidle import _options
from gpuidle._native import _gpuidle

from conftest import DATA_DIR, cli_json, run_cli


def _keyword_parameters(function) -> set[str]:
    return {name for name, p in inspect.signature(function).parameters.items()
            if p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD) and name not in ("self", "paths")}


def test_profile_takes_exactly_the_tables_profile_keywords():
    # gpuidle.profile(...) is an overloaded front for Profile(...), which holds the signature.
    # Besides the table's, only the few Python-only keywords (merge_ranks), none of the table's.
    assert _keyword_parameters(gpuidle.Profile.__init__) == (
        set(_options.PROFILE_KEYWORDS) | set(_options.PYTHON_PROFILE_KEYWORDS))
    assert not set(_options.PYTHON_PROFILE_KEYWORDS) & {s["keyword"] for s in _gpuidle.settings()}


def test_analyze_takes_exactly_the_tables_analysis_keywords():
    assert _keyword_parameters(gpuidle.analyze) == set(_options.ANALYSIS_KEYWORDS)
    assert set(_options.ANALYSIS_KEYWORDS) < set(_options.PROFILE_KEYWORDS)


def test_the_table_is_the_one_of_the_command_line():
    settings = _gpuidle.settings()
    variables = [s["variable"] for s in settings]
    assert len(variables) == len(set(variables)) and "GPUIDLE_MAX_GAPS" in variables
    usage = run_cli("help").stdout
    for s in settings:
        assert s["type"] in ("path", "str", "bool", "int", "number", "strings"), s
        if "run" in s["front_ends"] or "analyze" in s["front_ends"]:
            assert s["flag"] and s["flag"] in usage, s["variable"]
        if s["default"] and s["flag_value"]:
            assert f"(default {s['default']};" in usage.replace("\n" + " " * 25, " "), s["variable"]


@pytest.mark.parametrize("keyword,value", [("skip_steps", 0), ("launch_gap_max_us", 0.5),
                                           ("dispatch_latency_max_us", 0), ("max_gaps", 0)])
def test_analyze_and_the_command_line_agree_on_a_value(keyword, value):
    # The same value through gpuidle.analyze() and `gpuidle analyze --flag`: both accept it and
    # make the same report.
    trace = str(DATA_DIR / "traces" / "torch" / "healthy_matmul.json.gz")
    report = gpuidle.analyze(trace, **{keyword: value})
    flag = next(s["flag"] for s in _gpuidle.settings() if s["keyword"] == keyword)
    assert cli_json(flag, repr(value), trace) == json.loads(report.to_json())
