"""The Python keywords against gpuidle's one option table (lib/settings/option_table.h), which
the native module lists: every keyword of gpuidle.profile() and gpuidle.analyze() is a setting of
the table that applies there, and every such setting is a keyword."""

from __future__ import annotations

import inspect
import json
import os
import types
import typing
from typing import Iterable, Optional, Union

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


# The Python value each kind of setting of the table takes (None: not given).
VALUE_TYPES = {
    "path": Optional[Union[str, os.PathLike[str]]],
    "str": Optional[str],
    "bool": Optional[bool],
    "int": Optional[int],
    "number": Optional[float],
    "strings": Union[str, Iterable[str], None],
}


def _written_parameters(function) -> tuple[str, ...]:
    """The named parameters in the function's source (not its __signature__)."""
    code = function.__code__
    return code.co_varnames[:code.co_argcount + code.co_kwonlyargcount]


def _table(front_end: str) -> dict[str, str]:
    return {s["keyword"]: s["type"] for s in _gpuidle.settings() if front_end in s["front_ends"]}


def test_each_keyword_is_written_once_with_the_tables_kind_of_value():
    # Profile's own parameters are the outputs, which may be given by position; every other
    # setting of profile() is a key of _options.CollectionKeywords, of analyze() (a subset) of
    # _options.AnalysisKeywords. None is written twice, and together they are the table's.
    from gpuidle import _profile

    own = [p for p in _written_parameters(gpuidle.Profile.__init__)
           if p not in ("self", *_options.PYTHON_PROFILE_KEYWORDS)]
    collection = _options.keywords_of(_options.CollectionKeywords)
    analysis = _options.keywords_of(_options.AnalysisKeywords)
    assert own == ["out", "format", "trace", "quiet"]
    assert not set(own) & set(collection)
    assert sorted([*own, *collection]) == sorted(_table("profile"))
    assert sorted(analysis) == sorted(_table("py-analyze"))
    assert set(analysis) < set(collection)
    # gpuidle.profile() and gpuidle.analyze() name no setting themselves: they take Profile's
    # and the TypedDict's.
    assert _written_parameters(gpuidle.profile) == ("out",)
    assert _written_parameters(gpuidle.analyze) == ("paths",)
    hints = typing.get_type_hints(_options.CollectionKeywords, vars(_options))
    shown = inspect.signature(gpuidle.Profile).parameters
    holder = types.SimpleNamespace(__annotations__={p: shown[p].annotation for p in own})
    hints.update(typing.get_type_hints(holder, vars(_profile)))
    for keyword, kind in _table("profile").items():
        assert hints[keyword] == VALUE_TYPES[kind], keyword


def test_the_shown_signatures_are_the_keywords():
    # help() and editors that ask at run time see every keyword as a parameter, defaulting to
    # None, in the table's order after Profile's own.
    shown = inspect.signature(gpuidle.Profile).parameters
    assert list(shown) == ["out", "format", "trace", "quiet",
                           *_options.keywords_of(_options.CollectionKeywords), "merge_ranks"]
    assert all(p.default is None for name, p in shown.items() if name != "merge_ranks")
    assert inspect.signature(gpuidle.profile).parameters == shown
    assert list(inspect.signature(gpuidle.analyze).parameters) == [
        "paths", *_options.keywords_of(_options.AnalysisKeywords)]


@pytest.mark.parametrize("call", ["profile", "Profile", "analyze", "diff"])
def test_an_unknown_keyword_is_the_type_error_python_raises(call):
    trace = str(DATA_DIR / "traces" / "torch" / "healthy_matmul.json.gz")
    calls = {"profile": gpuidle.profile, "Profile": gpuidle.Profile,
             "analyze": lambda **kw: gpuidle.analyze(trace, **kw),
             "diff": lambda **kw: gpuidle.diff(trace, trace, **kw)}
    name = call if call in ("analyze", "diff") else "Profile.__init__"
    with pytest.raises(TypeError, match=rf"^{name}\(\) got an unexpected keyword argument 'no_such'$"):
        calls[call](no_such=1)
    if call in ("analyze", "diff"):  # a collection's setting is not the analysis'
        with pytest.raises(TypeError, match="unexpected keyword argument 'buffer_mb'"):
            calls[call](buffer_mb=1)


@pytest.mark.parametrize("front_end", ["profile", "py-analyze"])
def test_every_keyword_reaches_the_native_rules(front_end):
    # A keyword that a signature shows but the call drops would be accepted whatever its value.
    trace = str(DATA_DIR / "traces" / "torch" / "healthy_matmul.json.gz")
    call = gpuidle.profile if front_end == "profile" else (
        lambda **kw: gpuidle.analyze(trace, **kw))
    for keyword in _table(front_end):
        with pytest.raises(TypeError, match=rf"^{keyword} must "):
            call(**{keyword: object()})


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
