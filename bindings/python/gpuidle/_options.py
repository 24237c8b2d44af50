"""Keyword arguments of the Python API as the GPUIDLE_* variables that mean the same.

The native side applies them with the rules of the environment variables and of
``gpuidle run``'s flags (lib/session/profiler_options.cc), so that one value is accepted or
refused the same way everywhere; ValueError names the keyword.
"""

from __future__ import annotations

import os
from typing import Iterable, Union

# keyword -> (variable, type of value)
_VARIABLES: dict[str, tuple[str, str]] = {
    "out": ("GPUIDLE_OUT", "path"),
    "format": ("GPUIDLE_FORMAT", "str"),
    "trace": ("GPUIDLE_TRACE", "path"),
    "quiet": ("GPUIDLE_QUIET", "bool"),
    "max_records": ("GPUIDLE_MAX_RECORDS", "int"),
    "buffer_mb": ("GPUIDLE_BUFFER_MB", "int"),
    "launch_gap_max_us": ("GPUIDLE_LAUNCH_GAP_MAX_US", "number"),
    "dispatch_latency_max_us": ("GPUIDLE_DISPATCH_LATENCY_MAX_US", "number"),
    "data_ranges": ("GPUIDLE_DATA_RANGE", "strings"),
    "max_gaps": ("GPUIDLE_MAX_GAPS", "int"),
    "skip_steps": ("GPUIDLE_SKIP_STEPS", "int"),
    "host_sample_ms": ("GPUIDLE_HOST_SAMPLE_MS", "number"),
}

#: The keywords gpuidle.analyze() takes (the analysis thresholds; no outputs).
ANALYSIS_KEYWORDS = ("launch_gap_max_us", "dispatch_latency_max_us", "data_ranges", "max_gaps",
                     "skip_steps")

Setting = tuple[str, str, Union[str, bytes]]  # (label for messages, variable, value)

# How much of a value an error message repeats.
_LABEL_VALUE_MAX = 60


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
        return [str(value)]  # the parser reads repr(float) too ("1e-05", "inf" is refused)
    if kind == "strings":
        patterns: Iterable[object] = [value] if isinstance(value, str) else value  # type: ignore[assignment]
        try:
            items = list(patterns)
        except TypeError:
            raise wrong("a str or a list of str") from None
        for item in items:
            if not isinstance(item, str):
                raise TypeError(f"{keyword} must hold str, not {type(item).__name__}")
        return items
    raise AssertionError(kind)


def settings(**keywords: object) -> list[Setting]:
    """The (label, variable, value) triples for the keywords that are not None."""
    out: list[Setting] = []
    for keyword, value in keywords.items():
        if value is None:
            continue
        variable, kind = _VARIABLES[keyword]
        for text in _text(keyword, value, kind):
            shown = text if len(text) <= _LABEL_VALUE_MAX else text[:_LABEL_VALUE_MAX] + "..."
            native: Union[str, bytes] = os.fsencode(text) if kind == "path" else text
            out.append((f"{keyword}={shown!r}", variable, native))
    return out
