"""Live profiling: ``with gpuidle.profile() as p:``."""

from __future__ import annotations

import atexit
import functools
import inspect
import os
import sys
import threading
import weakref
from typing import TYPE_CHECKING, Any, Callable, Optional, TypeVar, Union, overload

from . import _call_sites, _markers, _options, _os_exit, _sampler
from ._native import _gpuidle
from ._report import Report

if sys.version_info >= (3, 11):
    from typing import Unpack
elif TYPE_CHECKING:
    from typing_extensions import Unpack
if TYPE_CHECKING:
    from typing_extensions import ParamSpec

    _P = ParamSpec("_P")

F = TypeVar("F", bound=Callable[..., Any])
R = TypeVar("R")
PathLike = Union[str, "os.PathLike[str]"]


def _warn(message: str) -> None:
    sys.stderr.write(f"gpuidle: warning: {message}\n")
    sys.stderr.flush()


def _note(message: str) -> None:
    sys.stderr.write(f"gpuidle: {message}\n")


class Profile:
    """A collection of this process's GPU timeline, and its report when it stops.

    Use :func:`profile` to make one. It starts on ``with`` (or when the decorated function is
    called) and stops at the end: the analysis then prints the summary on standard error (unless
    ``quiet``), writes ``out`` / ``trace`` if given, and leaves the :class:`Report` in
    :attr:`report`. Without a GPU, driver or CUPTI, with CUPTI owned by another tool, or in a
    forked child, gpuidle prints one warning line and the block runs as usual: :attr:`active` is
    False and :attr:`report` stays None. With ``merge_ranks=True`` in a torch.distributed job,
    rank 0 also gets the job's report in :attr:`job_report` (gpuidle/_distributed.py).
    """

    @_options.shows_keywords(_options.CollectionKeywords)
    def __init__(
        self,
        out: Optional[PathLike] = None,
        format: Optional[str] = None,
        trace: Optional[PathLike] = None,
        quiet: Optional[bool] = None,
        *,
        merge_ranks: bool = False,
        **keywords: Unpack[_options.CollectionKeywords],
    ) -> None:
        if not isinstance(merge_ranks, bool):
            raise TypeError(f"merge_ranks must be bool, not {type(merge_ranks).__name__}")
        settings = _options.settings("Profile.__init__", _options.CollectionKeywords, keywords,
                                     out=out, format=format, trace=trace, quiet=quiet)
        # Reads the GPUIDLE_* environment now, then the keywords over it (ValueError here for a
        # bad keyword; a bad environment variable is the one warning at start instead).
        self._native = _gpuidle.Profiler(settings)
        self._lock = threading.Lock()
        self._depth = 0
        self._torch_installed = False
        self._serving_installed = False
        self._sampling = False
        self._merge_ranks = merge_ranks
        self._gather_pending = False
        #: The analysis of the last collection; None before it stops or when nothing was
        #: collected (no GPU, no CUDA work).
        self.report: Optional[Report] = None
        #: With ``merge_ranks=True``, on rank 0 of an initialised torch.distributed job of
        #: several ranks: the job's report, every rank's report merged (waits for peers, the
        #: straggler); None on the other ranks and otherwise.
        self.job_report: Optional[Report] = None
        #: Why the last start() did not collect (the warning gpuidle printed), else None.
        self.error: Optional[str] = None
        #: Why a configured output was not written at stop (warned already), else None.
        self.output_error: Optional[str] = None

    # --- state ------------------------------------------------------------------------------

    @property
    def active(self) -> bool:
        """True while this profile collects."""
        return bool(self._native.collecting)

    @property
    def report_path(self) -> Optional[str]:
        """Where the report was written at stop (``out``, after placeholders and the
        never-overwrite rule), or None."""
        return os.fsdecode(self._native.written_report_path) or None

    @property
    def trace_path(self) -> Optional[str]:
        """Where the trace was written at stop (``trace``), or None."""
        return os.fsdecode(self._native.written_trace_path) or None

    @property
    def cost(self) -> dict[str, float]:
        """What the last collection's start and stop cost, in milliseconds: ``start`` (of which
        ``attach``, ``kinds``, ``calls``), ``flush``, ``build``, ``detach``, ``analysis``,
        ``output`` (zeros before the first stop)."""
        return dict(self._native.cost)

    # --- start / stop ---------------------------------------------------------------------------

    def start(self) -> bool:
        """Starts collecting; False (after one warning line) if gpuidle cannot."""
        with self._lock:
            self._depth += 1
            if self._depth > 1:  # nested use of the same profile: the outer one collects
                return self.active
        # Every rank gathers at the end, whether it collects or not (the others wait for it).
        self._gather_pending = self._merge_ranks
        self.report = None
        self.job_report = None
        self.error = None
        self.output_error = None
        if "torch" in sys.modules:
            from . import _torch

            if _torch.in_worker():  # a DataLoader worker makes batches; it never collects
                self._gather_pending = False  # nor is it a rank of the job
                self.error = "not profiling a DataLoader worker process"
                return False
            conflict = _torch.conflict()
            if conflict is not None:
                # Taking CUPTI now would silently cost torch.profiler its records.
                self.error = f"{conflict}: gpuidle steps aside and collects nothing"
                _warn(f"{self.error} (analyse torch.profiler's trace with gpuidle.analyze)")
                return False
        # Another profile may be collecting (this one is then refused below): its PyTorch
        # integration and call sites are its own, and stay.
        owns_hooks = not _running
        if owns_hooks:
            self._install_torch()
            self._install_serving()
            _call_sites.enable()
        error = self._native.start()
        if error is not None:
            self.error = error
            if owns_hooks:
                _call_sites.disable()
                self._uninstall_serving()
                self._uninstall_torch()
            return False
        _running.add(self)
        _os_exit.install()
        _sampler.acquire()  # host stacks during long stretches without CUDA
        self._sampling = True
        return True

    def _stop_now(self) -> Optional[Report]:
        """Stops however deeply nested (torch.profiler is about to take CUPTI). The job's report
        is still gathered where the block ends (every rank reaches that point)."""
        with self._lock:
            self._depth = min(self._depth, 1)
        return self._stop(at_exit=False, gather=False)

    def stop(self) -> Optional[Report]:
        """Stops collecting, analyses, prints the summary and writes the outputs; returns
        :attr:`report`. With ``merge_ranks=True`` it then gathers the job's report to rank 0
        (:attr:`job_report`), once per start, even when this rank collected nothing. Does
        nothing else if this profile is not collecting."""
        return self._stop(at_exit=False)

    def _stop(self, at_exit: bool, gather: bool = True) -> Optional[Report]:
        with self._lock:
            if self._depth > 1:
                self._depth -= 1
                return self.report
            self._depth = 0
        if self not in _running:  # never started (or already stopped): nothing of it to undo
            if gather:
                self._gather(at_exit)
            return self.report
        _markers.end_step()
        if self._sampling:  # stopped and joined before the collection ends
            self._sampling = False
            _sampler.release()
        try:
            if self._native.collecting:
                # The GIL is released meanwhile. At exit CUPTI stays attached: nothing runs after.
                self.output_error = self._native.stop(at_exit=True) if at_exit else self._native.stop()
                native = self._native.report()
                self.report = Report._from_native(native) if native is not None else None
                self._print_outcome()
        finally:
            _running.discard(self)
            _call_sites.disable()
            self._uninstall_serving()
            self._uninstall_torch()
        if gather:
            self._gather(at_exit)
        return self.report

    def _gather(self, at_exit: bool) -> None:
        """merge_ranks: the job's report to rank 0, once per collection."""
        if not self._gather_pending:
            return
        self._gather_pending = False
        if at_exit:  # the process group may be gone, and the other ranks elsewhere
            return
        from . import _distributed

        if _distributed.job_size() <= 1:
            return
        self.job_report = _distributed.gather_job_report(self.report)  # never raises
        if self.job_report is not None and self._native.print_summary:
            try:
                sys.stderr.write(f"gpuidle: the job's report ({len(self.job_report.ranks)} "
                                 f"ranks):\n{self.job_report.summary()}\n")
                sys.stderr.flush()
            except Exception:  # a closed stream: nowhere to say it; the job's report is there
                pass

    def _print_outcome(self) -> None:
        # What the C++ session prints, but through sys.stderr so that notebooks and redirected
        # streams see it.
        if not self._native.print_summary:
            return
        if self.report is None:
            if self.output_error is None:
                _note("no CUDA activity was recorded; no report")
        else:
            sys.stderr.write(self.report.summary() + "\n")
        if self.report_path:
            _note(f"report written to {self.report_path}")
        if self.trace_path:
            _note(f"trace written to {self.trace_path}")
        sys.stderr.flush()

    def save_trace(self, path: PathLike, *, overwrite: bool = False) -> None:
        """Writes the recorded timeline as a gpuidle trace (Perfetto UI opens it,
        :func:`gpuidle.analyze` reads it back), by the rules of :meth:`Report.save`: an
        existing file is FileExistsError unless ``overwrite=True``."""
        self._native.save_trace(_options.native_path(path), overwrite)

    # --- markers --------------------------------------------------------------------------------

    def step(self) -> _markers.StepHandle:
        """Ends the current step of this thread and begins the next (see :func:`gpuidle.step`)."""
        return _markers.step()

    # --- PyTorch --------------------------------------------------------------------------------

    def _install_torch(self) -> None:
        # Only when the program already imported torch: gpuidle never pays torch's import.
        if "torch" not in sys.modules:
            return
        try:
            from . import _torch

            self._torch_installed = _torch.install(self)
        except Exception as e:  # never break the program over the integration
            _warn(f"PyTorch integration failed ({type(e).__name__}: {e}); profiling without it")

    def _uninstall_torch(self) -> None:
        if not self._torch_installed:
            return
        self._torch_installed = False
        try:
            from . import _torch

            _torch.uninstall()
        except Exception as e:
            _warn(f"PyTorch integration failed to uninstall ({type(e).__name__}: {e})")

    # --- serving requests ---------------------------------------------------------------------

    def _install_serving(self) -> None:
        # http.server and transformers' generate() (gpuidle/_serving.py), which warns itself for
        # a patch that fails.
        try:
            from . import _serving

            self._serving_installed = _serving.install()
        except Exception as e:  # never break the program over the marks
            _warn(f"request marks failed ({type(e).__name__}: {e}); profiling without them")

    def _uninstall_serving(self) -> None:
        if not self._serving_installed:
            return
        self._serving_installed = False
        try:
            from . import _serving

            _serving.uninstall()
        except Exception as e:
            _warn(f"request marks failed to uninstall ({type(e).__name__}: {e})")

    # --- context manager and decorator ----------------------------------------------------------

    def __enter__(self) -> "Profile":
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def __call__(self, func: F) -> F:
        """Used as a decorator: each call of func is profiled (nested calls join the outer)."""

        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with self:
                return func(*args, **kwargs)

        wrapper.profile = self  # type: ignore[attr-defined]
        return wrapper  # type: ignore[return-value]

    def __repr__(self) -> str:
        state = "active" if self.active else ("inactive: " + self.error if self.error else "inactive")
        return f"<gpuidle.Profile {state}>"


# Profiles still collecting when the interpreter exits are stopped by Python's atexit, before
# the C++ exit handlers and CUDA's teardown, so that their summary and outputs appear as usual
# (and no CUPTI callback asks the interpreter for a call site once it is gone). Like the C++
# exit handler's stop, they leave CUPTI attached: detaching speeds up only what runs after.
_running: "weakref.WeakSet[Profile]" = weakref.WeakSet()


@atexit.register
def _stop_running_profiles() -> None:
    for p in list(_running):
        try:
            p._depth = 1
            p._stop(at_exit=True)
        except Exception as e:  # exiting: report, never raise
            _warn(f"stopping at exit failed: {e}")


def _arguments_of(cls: Callable[_P, Any]) -> Callable[[Callable[..., R]], Callable[_P, R]]:
    """For type checkers: the decorated overload takes what `cls` takes (Profile's parameters,
    written once)."""
    return lambda function: function  # type: ignore[return-value]


@overload
def profile(func: F, /) -> F: ...


@overload
@_arguments_of(Profile)
def profile() -> Profile: ...


def profile(out: Any = None, *args: Any, **kwargs: Any) -> Any:
    """Profiles a block or a function: why were the GPUs idle meanwhile?

    ::

        with gpuidle.profile(out="report.json") as p:
            for batch in loader:
                p.step()
                train_step(batch)
        print(p.report.devices[0].cause_shares)

        @gpuidle.profile(quiet=True)
        def train(): ...

    Every keyword has a ``GPUIDLE_*`` environment variable (docs/INJECTION.md), which gives its
    default; a keyword that is given wins.

    Args:
        out: write the report here when collection stops (``%p`` pid, ``%r`` rank, ``%h`` host;
            an existing file is never replaced: the pid is added to the name instead).
        format: "text", "json" or "html" for ``out`` (default: from its extension).
        trace: write the recorded timeline here (a gpuidle trace; Perfetto UI opens it).
        quiet: no summary on standard error at the end.
        launch_gap_max_us: host stretches between CUDA calls shorter than this are launch
            overhead, longer ones host work (default 1000).
        dispatch_latency_max_us: queued work that waits longer than this with no cause in the
            trace is unattributed, not kernel_gap (default 100).
        data_ranges: host ranges whose name contains one of these are data waits (added to
            the defaults; a comma separates patterns; an empty one is a ValueError).
        max_gaps: longest gaps kept in the report (default 50).
        skip_steps: leave the first this many steps out of the report (warm-up: CUPTI spends
            milliseconds on the first CUDA call of each thread after a profile starts; default
            0). The report's window begins at the next step.
        as_recorded: analyse the timeline as recorded, gpuidle's own cost left in the gaps it
            lengthened (default False: the report describes the program without gpuidle, and
            ``DeviceReport.tracer_ns`` says what was taken out).
        max_records: stop recording after this many records (default 20,000,000).
        buffer_mb: CUPTI buffer memory in MiB, 1 to 4096 (default 64).
        host_sample_ms: sample the Python stacks of the launching threads every this many ms
            while they are away from CUDA for long (default 5; 0 turns it off).
        gpu_metrics_ms: read each GPU the collection uses through NVML every this many ms:
            clocks, power, temperature, PCIe link, memory, other processes (default 100; 0
            turns it off; ``DeviceReport.gpu_metrics``).
        gpu_throughput_ms: sample each GPU the collection uses with CUPTI's PM sampling, one
            sample per this many ms: SM and tensor activity, DRAM, PCIe and NVLink throughput
            (default 0, off, until proven on a GPU; 10 suits; ``GpuMetrics.throughput``).
        sample: "W/P" in seconds: record W seconds of every P, CUPTI detached in between, for
            long runs; the report sums the windows and states its coverage (default: record
            everything).
        summary_every_s: every this many seconds, the report of the windows closed so far, to
            ``summary_file`` (replaced each time) or standard error.
        summary_file: where the periodic summaries go (json for a ``.json`` name, else text).
        metrics_file: Prometheus text-format metrics, replaced as windows close
            (docs/METRICS.md).
        metrics_port: serve the metrics on 127.0.0.1:N (N plus LOCAL_RANK where set).
        merge_ranks: in a torch.distributed job (the default process group initialised, more
            than one rank), gather every rank's report to rank 0 when the profile stops and
            merge them there into :attr:`Profile.job_report` (waits for peers, the straggler
            and its own cause). A collective: every rank must leave the block. A failed
            gather is one warning; :attr:`Profile.report` stays the rank's own report.

    Raises:
        ValueError: a keyword has a bad value (TypeError: a wrong type). Nothing is raised when
            gpuidle cannot collect; it warns once and :attr:`Profile.active` is False.
    """
    if callable(out) and not isinstance(out, (str, os.PathLike)) and not args and not kwargs:
        return Profile()(out)  # @gpuidle.profile without parentheses
    return Profile(out, *args, **kwargs)


# help(gpuidle.profile) and editors that ask at run time show Profile's parameters.
profile.__signature__ = inspect.signature(Profile).replace(  # type: ignore[attr-defined]
    return_annotation="Profile")
