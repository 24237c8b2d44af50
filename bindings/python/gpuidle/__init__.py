"""gpuidle: why is my GPU idle?

gpuidle records the GPU timeline of this process with CUPTI and gives every idle nanosecond of
every GPU exactly one cause: data_starved, launch_bound or sync_bound (or, honestly,
unattributed), with the evidence and the fix::

    import gpuidle

    with gpuidle.profile(out="report.json") as p:
        for batch in loader:
            p.step()                       # one row per step in the report
            with gpuidle.data():           # idle meanwhile: data_starved.dataloader
                batch = batch.cuda(non_blocking=True)
            train_step(batch)
    r = p.report                           # None without a GPU (one warning, nothing raised)
    if r:
        print(r.devices[0].cause_shares)

    report = gpuidle.analyze("trace.json.gz")   # a torch.profiler or gpuidle trace

From the shell, ``python -m gpuidle`` is the ``gpuidle`` command line: ``python -m gpuidle run --
python train.py``, ``python -m gpuidle analyze trace.json.gz``. The guide: docs/PYTHON.md.
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Iterable, Optional, Sequence, Union

from . import _options
from ._markers import StepHandle, data, end_step, range, step
from ._native import _gpuidle
from ._profile import Profile, profile
from ._requests import Request, request
from ._report import (
    CAUSES,
    ONE_OFF_KINDS,
    PHASES,
    SUBCAUSES,
    Advice,
    ClockAlignment,
    CollectiveStats,
    Coverage,
    DeviceReport,
    Gap,
    GpuFinding,
    GpuMetrics,
    GpuThroughput,
    GpuProcess,
    Offender,
    PeriodicWork,
    OneOffTime,
    Percentiles,
    RankReport,
    Report,
    Serving,
    StepGpu,
    StepReport,
    TimelineGpu,
    TimelineSummary,
    Verdict,
    VisibleDevice,
)

if sys.version_info >= (3, 11):
    from typing import Unpack
elif TYPE_CHECKING:
    from typing_extensions import Unpack

__version__: str = _gpuidle.__version__

#: Raised for errors without a closer Python exception (a truncated trace, a trace without
#: activity, ...); ``code`` holds the status code name ("DATA_LOSS"). A bad argument or a bad
#: trace file is ValueError, a missing file FileNotFoundError.
GpuidleError = _gpuidle.GpuidleError

PathLike = Union[str, "os.PathLike[str]"]

__all__ = [
    "CAUSES",
    "ONE_OFF_KINDS",
    "PHASES",
    "SUBCAUSES",
    "Advice",
    "ClockAlignment",
    "CollectiveStats",
    "Coverage",
    "DeviceReport",
    "Gap",
    "GpuFinding",
    "GpuMetrics",
    "GpuThroughput",
    "GpuProcess",
    "GpuidleError",
    "Offender",
    "PeriodicWork",
    "OneOffTime",
    "Percentiles",
    "Profile",
    "RankReport",
    "Report",
    "Request",
    "Serving",
    "StepHandle",
    "StepGpu",
    "StepReport",
    "TimelineGpu",
    "TimelineSummary",
    "Verdict",
    "VisibleDevice",
    "Diff",
    "analyze",
    "cli_main",
    "diff",
    "data",
    "end_step",
    "merge_reports",
    "profile",
    "range",
    "request",
    "step",
]


def _paths(paths: Union[PathLike, Iterable[PathLike]], caller: str = "analyze") -> list[bytes]:
    if isinstance(paths, (str, bytes, os.PathLike)):
        items: list[object] = [paths]
    else:
        try:
            items = list(paths)  # type: ignore[arg-type]
        except TypeError:
            raise TypeError(f"{caller}(): paths must be a trace path (str or os.PathLike) or a list "
                            f"of them, not {type(paths).__name__}") from None
    return [_options.native_path(p, "trace path") for p in items]


@_options.shows_keywords(_options.AnalysisKeywords)
def analyze(paths: Union[PathLike, Iterable[PathLike]],
            **keywords: Unpack[_options.AnalysisKeywords]) -> Report:
    """Analyses trace files: why were the GPUs idle?

    Reads PyTorch profiler (Kineto) traces (``prof.export_chrome_trace``) and gpuidle traces
    (``profile(trace=...)``, ``gpuidle run --trace``), plain or gzip. Several files are the
    ranks of one job; a directory written by torch.profiler's ``tensorboard_trace_handler`` is
    one job, of the newest trace of each worker (``Report.inputs`` names them). The keywords are those of :func:`profile`; the figures equal those of
    ``gpuidle analyze --format json``.

    Ctrl-C raises KeyboardInterrupt at once: the analysis runs on a thread of its own, which
    is told to stop (its read stops within a fraction of a second; the analysis after the read
    finishes in the background and its result is dropped).

    Raises:
        FileNotFoundError: a file does not exist.
        TypeError: ``paths`` is neither a path nor a list of paths.
        ValueError: a file is not a trace (not JSON, wrong field types), or a bad keyword.
        GpuidleError: anything else (a truncated trace, a trace without activity, ...).
    """
    settings = _options.settings("analyze", _options.AnalysisKeywords, keywords)
    return Report._from_native(_gpuidle.analyze(_paths(paths), settings))


ReportLike = Union[Report, str, "os.PathLike[str]"]


class Diff:
    """What changed from one run to another (``gpuidle diff``): step time, lost time per cause
    and subcause (per step where both runs have steps), devices, communication, start-up apart,
    the advice resolved or new with the gain predicted before, caveats, and a verdict; or, for
    runs that look like different programs, that they are not comparable and why
    (:attr:`comparable`, :attr:`comparability`)."""

    def __init__(self, text: str, json_text: str) -> None:
        self._text = text
        self._json = json_text

    def summary(self) -> str:
        """The text, as ``gpuidle diff`` prints it."""
        return self._text

    def to_json(self) -> str:
        """The JSON (schema gpuidle.diff/1, docs/REPORT_SCHEMA.md), as ``gpuidle diff --format
        json`` writes it."""
        return self._json

    def to_dict(self) -> dict:
        """The JSON as plain Python values (a copy, made on each call)."""
        import json

        return dict(json.loads(self._json))

    @property
    def verdict(self) -> str:
        """One line: "step time 13.6 -> 10.1 ms (-26%): sync_bound.host_sync -4.6 ms/step; the
        fix worked"; for runs that are not comparable, "not comparable (kernels_per_step): ...;
        no verdict on a fix"."""
        return str(self.to_dict()["verdict"]["text"])

    @property
    def comparable(self) -> bool:
        """False when the runs look like different programs or set-ups (another kernel mix,
        device count, GPU model or step source: docs/ANALYSIS.md, "Comparable runs"); the
        figures are still compared, but the verdict is none on a fix."""
        return bool(self.to_dict()["comparability"]["comparable"])

    @property
    def comparability(self) -> dict:
        """The comparability finding as in the JSON: ``comparable``, ``reasons`` (a list of
        ``{"code": ..., "message": ...}``, empty when comparable), ``kernels_per_step`` and
        ``kernel_names`` (docs/REPORT_SCHEMA.md)."""
        return dict(self.to_dict()["comparability"])

    def __str__(self) -> str:
        return self._text

    def __repr__(self) -> str:
        return f"<gpuidle.Diff: {self.verdict}>"


def diff(before: Union[Report, PathLike, Iterable[PathLike]],
         after: Union[Report, PathLike, Iterable[PathLike]],
         **thresholds: Unpack[_options.AnalysisKeywords]) -> Diff:
    """Compares two runs: did the fix work? Each side is a :class:`Report` or what
    :func:`analyze` takes (a trace or JSON report path, or several: the ranks of one job),
    analysed with the keywords of :func:`analyze`. Mismatches (other devices, no steps, lost
    records) are caveats of the result, not errors.

    Raises what :func:`analyze` raises for a side that cannot be read.
    """
    # Checked here too: with two Reports the keywords reach no analyze() that would check them.
    _options.settings("diff", _options.AnalysisKeywords, thresholds)
    sides = [side if isinstance(side, Report) else analyze(side, **thresholds)
             for side in (before, after)]
    text, json_text = sides[0]._native.diff(sides[1]._native)
    return Diff(str(text), str(json_text))


def merge_reports(reports: Iterable[ReportLike]) -> Report:
    """Merges the reports of a job's ranks into the job's report: waits for peers, the
    straggler and its own cause, the clocks (docs/ANALYSIS.md, "Many ranks").

    Each item is a :class:`Report` (a rank's ``profile().report`` or :func:`analyze` of one
    trace), the text of a JSON report (``Report.to_json()``; a str that begins with ``{``), or
    the path of a JSON report file (``profile(out="report.%r.json")``, plain or gzip), read as
    ``gpuidle analyze`` reads it (a trace file beside reports is analysed as its rank; traces
    alone are refused: :func:`analyze` takes them, several as the ranks of one job). The figures are
    those of ``gpuidle analyze report.*.json`` with the default thresholds, and equal those of
    :func:`analyze` of the ranks' traces together. A report without a rank number counts as the
    rank of its position. A duplicate or missing rank is a warning of the merged report
    (:attr:`Report.warnings`), not an error.

    Raises:
        FileNotFoundError: a file does not exist.
        ValueError: an item is neither a gpuidle JSON report nor a trace (a field of the wrong
            type, not JSON), no report is given, or every file given is a trace (then call
            :func:`analyze` with them).
        TypeError: ``reports`` is one report, path or JSON text rather than a list of them.
        MemoryError: a report beyond the reader's limits (256 MiB).
    """
    if isinstance(reports, (str, bytes, os.PathLike, Report)):
        # A str is iterable too: its characters would each be taken for a report.
        raise TypeError("merge_reports takes a list of reports, paths or JSON texts, not "
                        f"one {type(reports).__name__}: merge_reports([...])")
    items = list(reports)
    if not items:
        raise ValueError("merge_reports: no report given")
    files = [_report_file(item) for item in items]
    paths = [f for f in files if f is not None]
    if len(paths) == len(items):
        # Files alone: the native reader opens them (gzip, the size limit) and merges them, as
        # `gpuidle analyze report.*.json` does; traces alone are a ValueError that says to call
        # analyze(), not merged silently as ranks.
        return Report._from_native(_gpuidle.merge_report_files(paths))
    texts, names = zip(*(_report_text(item, f, i) for i, (item, f) in enumerate(zip(items, files))))
    return Report._from_native(_gpuidle.merge_reports(list(texts), list(names)))


def _report_file(item: ReportLike) -> Optional[bytes]:
    """The path of an item of merge_reports that names a file, else None; TypeError for an item
    that is none of the kinds merge_reports takes."""
    if isinstance(item, Report) or (isinstance(item, str) and item.lstrip().startswith("{")):
        return None
    if isinstance(item, (str, os.PathLike)) and isinstance(os.fspath(item), str):
        return _options.native_path(item, "report path")
    raise TypeError(f"reports must be Report, str or os.PathLike, not {type(item).__name__}")


def _report_text(item: ReportLike, path: Optional[bytes], position: int) -> tuple[str, bytes]:
    """(JSON text, name for errors and warnings) of one item of merge_reports."""
    if path is not None:
        # Read by the native reader, as a list of files alone is.
        return _gpuidle.analyze([path], []).format("json"), path
    if isinstance(item, Report):
        if len(item.inputs) == 1:
            name = item.inputs[0]
        else:
            name = f"rank {item.ranks[0].rank if len(item.ranks) == 1 else position}"
        return item.to_json(), os.fsencode(name)
    return str(item), f"report {position}".encode()


def cli_main(argv: Optional[Sequence[str]] = None) -> int:
    """Runs the ``gpuidle`` command line in this process and returns its exit code.

    ``argv`` are the arguments after ``gpuidle`` (default ``sys.argv[1:]``): ``["analyze",
    "trace.json.gz"]``, ``["run", "--", "python", "train.py"]``, ``["help"]``. Output goes to
    the process's standard output and error. ``run`` injects the libgpuidle.so that this
    package uses (unless ``GPUIDLE_LIBRARY`` names another), so that a program that imports
    gpuidle itself still holds one copy of it.
    """
    args = list(sys.argv[1:] if argv is None else argv)
    for a in args:
        if not isinstance(a, str):
            raise TypeError(f"arguments must be str, not {type(a).__name__}")
    for stream in (sys.stdout, sys.stderr):
        if stream is not None:
            stream.flush()
    set_library = not os.environ.get("GPUIDLE_LIBRARY")
    if set_library:
        os.environ["GPUIDLE_LIBRARY"] = _gpuidle.library_path()
    try:
        return int(_gpuidle.cli_main(args))
    finally:
        if set_library:
            os.environ.pop("GPUIDLE_LIBRARY", None)
