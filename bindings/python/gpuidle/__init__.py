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

import gzip
import os
import sys
from typing import Iterable, Optional, Sequence, Union

from . import _options
from ._markers import StepHandle, data, end_step, range, step
from ._native import _gpuidle
from ._profile import Profile, profile
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
    Offender,
    PeriodicWork,
    OneOffTime,
    RankReport,
    Report,
    StepReport,
    TimelineSummary,
    VisibleDevice,
)

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
    "GpuidleError",
    "Offender",
    "PeriodicWork",
    "OneOffTime",
    "Profile",
    "RankReport",
    "Report",
    "StepHandle",
    "StepReport",
    "TimelineSummary",
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
    "step",
]


def _paths(paths: Union[PathLike, Iterable[PathLike]]) -> list[bytes]:
    items = [paths] if isinstance(paths, (str, bytes, os.PathLike)) else list(paths)  # type: ignore[list-item]
    return [_options.native_path(p, "trace path") for p in items]


def analyze(
    paths: Union[PathLike, Iterable[PathLike]],
    *,
    launch_gap_max_us: Optional[float] = None,
    dispatch_latency_max_us: Optional[float] = None,
    data_ranges: Union[str, Iterable[str], None] = None,
    max_gaps: Optional[int] = None,
    skip_steps: Optional[int] = None,
    as_recorded: Optional[bool] = None,
) -> Report:
    """Analyses trace files: why were the GPUs idle?

    Reads PyTorch profiler (Kineto) traces (``prof.export_chrome_trace``) and gpuidle traces
    (``profile(trace=...)``, ``gpuidle run --trace``), plain or gzip. Several files are the
    ranks of one job. The keywords are those of :func:`profile`; the figures equal those of
    ``gpuidle analyze --format json``.

    Ctrl-C raises KeyboardInterrupt at once: the analysis runs on a thread of its own, which
    is told to stop (its read stops within a fraction of a second; the analysis after the read
    finishes in the background and its result is dropped).

    Raises:
        FileNotFoundError: a file does not exist.
        ValueError: a file is not a trace (not JSON, wrong field types), or a bad keyword.
        GpuidleError: anything else (a truncated trace, a trace without activity, ...).
    """
    settings = _options.settings(
        launch_gap_max_us=launch_gap_max_us, dispatch_latency_max_us=dispatch_latency_max_us,
        data_ranges=data_ranges, max_gaps=max_gaps, skip_steps=skip_steps,
        as_recorded=as_recorded)
    return Report._from_native(_gpuidle.analyze(_paths(paths), settings))


ReportLike = Union[Report, str, "os.PathLike[str]"]


class Diff:
    """What changed from one run to another (``gpuidle diff``): step time, lost time per cause
    and subcause (per step where both runs have steps), devices, communication, start-up apart,
    the advice resolved or new with the gain predicted before, caveats, and a verdict."""

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
        fix worked"."""
        return str(self.to_dict()["verdict"]["text"])

    def __str__(self) -> str:
        return self._text

    def __repr__(self) -> str:
        return f"<gpuidle.Diff: {self.verdict}>"


def diff(before: Union[Report, PathLike, Iterable[PathLike]],
         after: Union[Report, PathLike, Iterable[PathLike]], **thresholds: object) -> Diff:
    """Compares two runs: did the fix work? Each side is a :class:`Report` or what
    :func:`analyze` takes (a trace or JSON report path, or several: the ranks of one job),
    analysed with the keywords of :func:`analyze`. Mismatches (other devices, no steps, lost
    records) are caveats of the result, not errors.

    Raises what :func:`analyze` raises for a side that cannot be read.
    """
    sides = [side if isinstance(side, Report) else analyze(side, **thresholds)  # type: ignore[arg-type]
             for side in (before, after)]
    text, json_text = sides[0]._native.diff(sides[1]._native)
    return Diff(str(text), str(json_text))


def merge_reports(reports: Iterable[ReportLike]) -> Report:
    """Merges the reports of a job's ranks into the job's report: waits for peers, the
    straggler and its own cause, the clocks (docs/ANALYSIS.md, "Many ranks").

    Each item is a :class:`Report` (a rank's ``profile().report`` or :func:`analyze` of one
    trace), the text of a JSON report (``Report.to_json()``; a str that begins with ``{``), or
    the path of a JSON report file (``profile(out="report.%r.json")``, plain or gzip). The
    figures are those of ``gpuidle analyze report.*.json`` with the default thresholds, and
    equal those of :func:`analyze` of the ranks' traces together. A report without a rank
    number counts as the rank of its position. A duplicate or missing rank is a warning of the
    merged report (:attr:`Report.warnings`), not an error.

    Raises:
        FileNotFoundError: a file does not exist.
        ValueError: an item is not a gpuidle JSON report (a trace, a field of the wrong type),
            or no report is given.
        TypeError: ``reports`` is one report, path or JSON text rather than a list of them.
        MemoryError: a report beyond the reader's limits (256 MiB).
    """
    if isinstance(reports, (str, bytes, os.PathLike, Report)):
        # A str is iterable too: its characters would each be taken for a report.
        raise TypeError("merge_reports takes a list of reports, paths or JSON texts, not "
                        f"one {type(reports).__name__}: merge_reports([...])")
    return Report._from_native(_merge_native(list(reports)))


# The JSON reader's limit (lib/ingest/report_reader.h kMaxReportBytes), kept here too so that a
# huge or hostile file is refused before Python holds all of it.
_MAX_REPORT_BYTES = 256 << 20


def _read_report_file(path: str) -> str:
    with open(path, "rb") as f:
        compressed = f.read(2) == b"\x1f\x8b"
    with (gzip.open(path, "rb") if compressed else open(path, "rb")) as f:
        raw = f.read(_MAX_REPORT_BYTES + 1)
    if len(raw) > _MAX_REPORT_BYTES:
        raise MemoryError(f"{path}: a report is at most {_MAX_REPORT_BYTES >> 20} MiB")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ValueError(f"{path}: not a gpuidle JSON report (not UTF-8 text: {e})") from None


def _report_text(item: ReportLike, position: int) -> tuple[str, bytes]:
    """(JSON text, name for errors and warnings) of one item of merge_reports."""
    if isinstance(item, Report):
        if len(item.inputs) == 1:
            name = item.inputs[0]
        else:
            name = f"rank {item.ranks[0].rank if len(item.ranks) == 1 else position}"
        return item.to_json(), os.fsencode(name)
    if isinstance(item, str) and item.lstrip().startswith("{"):
        return item, f"report {position}".encode()
    if isinstance(item, (str, os.PathLike)):
        path = os.fspath(item)
        if isinstance(path, str):
            return _read_report_file(path), os.fsencode(path)
    raise TypeError(f"reports must be Report, str or os.PathLike, not {type(item).__name__}")


def _merge_native(items: list[ReportLike]) -> object:
    if not items:
        raise ValueError("merge_reports: no report given")
    texts, names = zip(*(_report_text(item, i) for i, item in enumerate(items)))
    return _gpuidle.merge_reports(list(texts), list(names))


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
