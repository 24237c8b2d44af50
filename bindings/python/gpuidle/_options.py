"""Keyword arguments of the Python API as the GPUIDLE_* variables that mean the same.

Which keywords there are, their variables and kinds of value come from gpuidle's one option
table (gpuidle/settings.h, lib/settings/option_table.h), which the native module lists; the
native side applies the values with the rules of the environment variables and of
``gpuidle run``'s flags, so that one value is accepted or refused the same way everywhere;
ValueError names the keyword.
"""

from __future__ import annotations

import inspect
import os
import sys
from typing import Any, Callable, Iterable, Mapping, Optional, TypedDict, TypeVar, Union

from ._native import _gpuidle

F = TypeVar("F", bound=Callable[..., Any])
PathLike = Union[str, "os.PathLike[str]"]

#: The option table, one dict per setting (variable, flag, keyword, type, default, range, help,
#: front_ends).
SETTINGS: tuple[dict[str, object], ...] = tuple(_gpuidle.settings())

# keyword -> (variable, type of value), for the settings Python takes.
_VARIABLES: dict[str, tuple[str, str]] = {
    str(s["keyword"]): (str(s["variable"]), str(s["type"])) for s in SETTINGS if s["keyword"]
}

#: The keywords gpuidle.profile() takes (a collection: outputs, limits, thresholds).
PROFILE_KEYWORDS = tuple(str(s["keyword"]) for s in SETTINGS
                         if "profile" in s["front_ends"])  # type: ignore[operator]
#: Keywords of gpuidle.profile() that only Python has, outside the option table (what they do
#: needs the Python side: merge_ranks gathers through torch.distributed).
PYTHON_PROFILE_KEYWORDS = ("merge_ranks",)
#: The keywords gpuidle.analyze() takes (the analysis thresholds; no outputs).
ANALYSIS_KEYWORDS = tuple(str(s["keyword"]) for s in SETTINGS
                          if "py-analyze" in s["front_ends"])  # type: ignore[operator]


# The keyword arguments of the Python API, each written once, with the type of its value. The
# functions take them as **keywords typed with these (so that editors and type checkers see
# every name and type), and inspect.signature() / help() show them as parameters
# (shows_keywords). Each is a setting of the table above: tests/python/test_options.py checks
# that the names, front ends and kinds of value agree with the native table.

class AnalysisKeywords(TypedDict, total=False):
    """The keywords of gpuidle.analyze() and gpuidle.diff(): the analysis thresholds (the
    table's front end "py-analyze")."""

    launch_gap_max_us: Optional[float]
    dispatch_latency_max_us: Optional[float]
    data_ranges: Union[str, Iterable[str], None]
    max_gaps: Optional[int]
    skip_steps: Optional[int]
    as_recorded: Optional[bool]


class CollectionKeywords(AnalysisKeywords, total=False):
    """The keyword-only settings of gpuidle.profile() (the table's front end "profile"): the
    thresholds and the collection's limits, sampling, summaries and metrics. The outputs (out,
    format, trace, quiet), which may also be given by position, are Profile's parameters."""

    max_records: Optional[int]
    buffer_mb: Optional[int]
    host_sample_ms: Optional[float]
    gpu_metrics_ms: Optional[float]
    gpu_throughput_ms: Optional[float]
    sample: Optional[str]
    summary_every_s: Optional[float]
    summary_file: Optional[PathLike]
    metrics_file: Optional[PathLike]
    metrics_port: Optional[int]


def keywords_of(keywords: type) -> tuple[str, ...]:
    """The names of one of the TypedDicts above (its bases' included), in order."""
    return tuple(keywords.__annotations__)


def shows_keywords(keywords: type) -> Callable[[F], F]:
    """Decorator: inspect.signature() and help() show the function's **keywords as the
    keyword-only parameters of `keywords` (a TypedDict above), each defaulting to None."""

    def decorate(function: F) -> F:
        signature = inspect.signature(function)
        own = [p for p in signature.parameters.values() if p.kind is not p.VAR_KEYWORD]
        # The settings come first among the keyword-only parameters (those of Python alone,
        # such as merge_ranks, after them).
        first = next((i for i, p in enumerate(own) if p.kind is p.KEYWORD_ONLY), len(own))
        # TypedDict keeps a string annotation as a ForwardRef: shown as its text, as the
        # function's own (string) annotations are.
        listed = [inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=None,
                                    annotation=getattr(annotation, "__forward_arg__", annotation))
                  for name, annotation in keywords.__annotations__.items()]
        function.__signature__ = signature.replace(  # type: ignore[attr-defined]
            parameters=own[:first] + listed + own[first:])
        return function

    return decorate

Setting = tuple[str, str, Union[str, bytes]]  # (label for messages, variable, value)

# How much of a value an error message repeats.
_LABEL_VALUE_MAX = 60

_EMPTY_FRAGMENT = ("an empty fragment matches every range or none; give name fragments of the "
                   "host ranges that are data waits (a comma separates them)")


def native_path(value: object, what: str = "path") -> bytes:
    """A path as the native module takes it: the file system's bytes, so that names that are
    not UTF-8 work as they do with open(); a NUL byte is a ValueError, as for open()."""
    if not isinstance(value, (str, bytes, os.PathLike)):
        raise TypeError(f"{what} must be a str or os.PathLike, not {type(value).__name__}")
    path = os.fsencode(value)
    if b"\0" in path:
        raise ValueError(f"embedded null byte in {what}")
    if not path:
        raise ValueError(f"{what} is empty")
    return path


def _text(keyword: str, value: object, kind: str) -> list[str]:
    def wrong(expected: str) -> TypeError:
        return TypeError(f"{keyword} must be {expected}, not {type(value).__name__}")

    if kind == "path":
        if not isinstance(value, (str, os.PathLike)):
            raise wrong("a str or path")
        path = os.fspath(value)
        if not isinstance(path, str):
            raise wrong("a str path")
        if "\0" in path:
            raise ValueError(f"embedded null byte in {keyword}")
        return [path]
    if kind == "str":
        if not isinstance(value, str):
            raise wrong("a str")
        return [value]
    if kind == "bool":
        if not isinstance(value, bool):
            raise wrong("True or False")
        return ["1" if value else "0"]
    if kind in ("int", "number"):
        allowed = (int,) if kind == "int" else (int, float)
        if isinstance(value, bool) or not isinstance(value, allowed):
            raise wrong("an int" if kind == "int" else "a number")
        # The value itself, never a subclass's own str() (an IntEnum's "Color.RED").
        if isinstance(value, float):
            return [float.__repr__(value)]  # the parser reads "1e-05"; "inf" is refused
        return [int.__repr__(value)]
    if kind == "strings":
        patterns: Iterable[object] = [value] if isinstance(value, str) else value  # type: ignore[assignment]
        try:
            items = list(patterns)
        except TypeError:
            raise wrong("a str or a list of str") from None
        for item in items:
            if not isinstance(item, str):
                raise TypeError(f"{keyword} must hold str, not {type(item).__name__}")
            # An empty fragment would match every range or none: refused (as an empty
            # --data-range is), not dropped without a word. A comma separates fragments.
            if any(not part.strip() for part in item.split(",")):
                raise ValueError(f"{keyword}={_shown(item)!r}: {_EMPTY_FRAGMENT}")
        return items
    raise AssertionError(kind)


def settings(caller: str, accepted: type, keywords: Mapping[str, object],
             **named: object) -> list[Setting]:
    """The (label, variable, value) triples for the settings that are not None: `named`, the
    caller's own parameters that are settings, then `keywords`, its **keywords, each of which
    must be one of `accepted` (a TypedDict above): another is the TypeError that Python raises
    for an unexpected keyword argument of `caller`."""
    allowed = keywords_of(accepted)
    for keyword in keywords:
        if keyword not in allowed:
            raise TypeError(f"{caller}() got an unexpected keyword argument {keyword!r}")
    out: list[Setting] = []
    for keyword, value in {**named, **keywords}.items():
        if value is None:
            continue
        variable, kind = _VARIABLES[keyword]
        if kind in ("int", "number") and _too_long_for_text(value):
            out.append(_huge_integer(keyword, variable, value))  # type: ignore[arg-type]
            continue
        for text in _text(keyword, value, kind):
            native: Union[str, bytes] = os.fsencode(text) if kind == "path" else text
            out.append((f"{keyword}={_shown(text)!r}", variable, native))
    return out


def _shown(text: str) -> str:
    return text if len(text) <= _LABEL_VALUE_MAX else text[:_LABEL_VALUE_MAX] + "..."


def _too_long_for_text(value: object) -> bool:
    """An int that str() refuses (more digits than sys.get_int_max_str_digits())."""
    if isinstance(value, bool) or not isinstance(value, int):
        return False
    limit = sys.get_int_max_str_digits() if hasattr(sys, "get_int_max_str_digits") else 0
    # Cheap first: a value with no more bits than the limit allows digits has fewer digits.
    if not limit or value.bit_length() <= limit:
        return False
    try:
        int.__repr__(value)
    except ValueError:
        return True
    return False


def _huge_integer(keyword: str, variable: str, value: int) -> Setting:
    """The setting for an int too long to write out: the parser gets a stand-in of the same
    sign that is beyond every setting's range, so that the value is refused for the same reason
    as 10**23 is, and the message names the keyword."""
    sign = "-" if value < 0 else ""
    limit = sys.get_int_max_str_digits()
    return (f"{keyword}=<{'a negative' if sign else 'an'} int of more than {limit} digits>",
            variable, sign + "1" + "0" * 40)
