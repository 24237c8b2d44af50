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
    Coverage,
    DeviceReport,
    Gap,
    Offender,
    OneOffTime,
    Report,
    StepReport,
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
    "Coverage",
    "DeviceReport",
    "Gap",
    "GpuidleError",
    "Offender",
    "OneOffTime",
    "Profile",
    "Report",
    "StepHandle",
    "StepReport",
    "analyze",
    "cli_main",
    "data",
    "end_step",
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
) -> Report:
    """Analyses trace files: why were the GPUs idle?

    Reads PyTorch profiler (Kineto) traces (``prof.export_chrome_trace``) and gpuidle traces
    (``profile(trace=...)``, ``gpuidle run --trace``), plain or gzip. Several files are the
    ranks of one job. The keywords are those of :func:`profile`; the figures equal those of
    ``gpuidle analyze --format json``.

    Ctrl-C raises KeyboardInterrupt at once: the analysis runs on a thread of its own, which
    is then abandoned (it finishes in the background and its result is dropped).

    Raises:
        FileNotFoundError: a file does not exist.
        ValueError: a file is not a trace (not JSON, wrong field types), or a bad keyword.
        GpuidleError: anything else (a truncated trace, a trace without activity, ...).
    """
    settings = _options.settings(
        launch_gap_max_us=launch_gap_max_us, dispatch_latency_max_us=dispatch_latency_max_us,
        data_ranges=data_ranges, max_gaps=max_gaps, skip_steps=skip_steps)
    return Report._from_native(_gpuidle.analyze(_paths(paths), settings))


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
