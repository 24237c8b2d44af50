"""gpuidle's answer to "why was my GPU idle?" as Python values.

A :class:`Report` is built from the JSON report (schema ``gpuidle.report/2``,
docs/REPORT_SCHEMA.md) that the C++ engine writes, so its figures are exactly those of
``gpuidle analyze --format json``. Times are integer nanoseconds.

The headline (each device's busy and idle time and causes, the steps, gaps, offenders and
advice) describes the steady state; start-up and wind-down are in ``DeviceReport.one_off``.
"""

from __future__ import annotations

import copy
import json
import os
from dataclasses import dataclass, field
from typing import Any, Optional, Union

from . import _options
from ._native import _gpuidle

#: The causes of idle time, in report order.
CAUSES: tuple[str, ...] = tuple(_gpuidle.CAUSES)
#: The qualified subcauses ("data_starved.dataloader", ...), in report order.
SUBCAUSES: tuple[str, ...] = tuple(_gpuidle.SUBCAUSES)
#: The phases of a run: "start_up", "steady", "wind_down".
PHASES: tuple[str, ...] = tuple(_gpuidle.PHASES)
#: What one-off time went to ("cuda_init", "compilation", ...), in report order.
ONE_OFF_KINDS: tuple[str, ...] = tuple(_gpuidle.ONE_OFF_KINDS)

PathLike = Union[str, "os.PathLike[str]"]


def _cause_of(subcause: str) -> str:
    return subcause.split(".", 1)[0]


def _share(part: int, whole: int) -> float:
    return part / whole if whole > 0 else 0.0


class _Idle:
    """Per-cause and per-subcause idle time; mixed into devices and steps."""

    idle_ns: int
    idle_by_cause: dict[str, int]
    idle_by_subcause: dict[str, int]

    @property
    def cause_shares(self) -> dict[str, float]:
        """Each cause's share of the idle time (0..1; all 0 when there is none)."""
        return {c: _share(ns, self.idle_ns) for c, ns in self.idle_by_cause.items()}

    @property
    def subcause_shares(self) -> dict[str, float]:
        """Each subcause's share of the idle time (0..1)."""
        return {s: _share(ns, self.idle_ns) for s, ns in self.idle_by_subcause.items()}

    @property
    def dominant(self) -> str:
        """The subcause with the most idle time ("unattributed" when there is none)."""
        best = max(self.idle_by_subcause.items(), key=lambda kv: kv[1], default=("", 0))
        return best[0] if best[1] > 0 else "unattributed"


@dataclass(frozen=True)
class OneOffTime:
    """Time of one device spent on one kind of one-off work in one phase.

    In the start-up and the wind-down the parts tile the phase ("gpu_busy" is its busy time);
    in the steady state they are idle time taken out of the headline (a re-compilation).
    """

    phase: str  #: "start_up", "steady" or "wind_down" (:data:`PHASES`)
    kind: str  #: "compilation", "cuda_init", ... (:data:`ONE_OFF_KINDS`)
    ns: int
    count: int  #: separate stretches
    evidence: str  #: the longest stretch's call, op or frame ("cuModuleLoadData"; "" if none)


@dataclass(frozen=True)
class CollectiveStats:
    """One kind of collective on one device (a process group's operation), steady state."""

    group: str  #: the process group where the trace says ("0"), else ""
    op: str  #: "allreduce", "allgather", ... (the trace's name, else the kernel's)
    count: int  #: kernels
    ns: int  #: kernels executing
    exposed_ns: int  #: ... while no other kernel executes
    bytes: Optional[int] = None  #: message bytes summed; None where the trace does not say
    #: part of ns spent waiting for peers; None unless the ranks were merged
    wait_ns: Optional[int] = None

    @property
    def wait_share(self) -> Optional[float]:
        """wait_ns over ns (0..1), None before a merge of ranks."""
        return None if self.wait_ns is None else _share(self.wait_ns, self.ns)


@dataclass(frozen=True)
class TimelineGpu:
    """A live capture's readings of a device per timeline bin (docs/REPORT_SCHEMA.md, "timeline"):
    means over each bin; a column is None where no bin has its figure, and a bin without readings
    holds 0 (NVML) or -1 (PM sampling)."""

    sm_clock_max_mhz: int  #: the tracks' scales
    power_limit_mw: int
    samples: Optional[list[int]] = None  #: NVML readings per bin
    sm_clock_mhz: Optional[list[int]] = None
    power_mw: Optional[list[int]] = None
    pm_ns: Optional[list[int]] = None  #: PM samples' time in each bin
    sm_active_pct: Optional[list[float]] = None
    tensor_active_pct: Optional[list[float]] = None
    dram_pct: Optional[list[float]] = None


@dataclass(frozen=True)
class TimelineSummary:
    """A device's whole window in at most 600 equal bins (docs/REPORT_SCHEMA.md, "timeline"):
    bin ``i`` starts at ``start_ns + i * bin_ns``; per bin, busy time, the steady state's idle
    time by cause, and one-off time (start-up, wind-down, one-off work)."""

    start_ns: int
    bin_ns: int
    busy_ns: list[int]
    idle_ns: dict[str, list[int]]  #: by cause
    one_off_ns: list[int]
    gpu: Optional[TimelineGpu] = None  #: live captures that read the device
    #: A serving process's requests in flight integrated over each bin (request nanoseconds);
    #: None where the process marked no requests. in_flight() gives the means.
    in_flight_ns: Optional[list[int]] = None

    def in_flight(self) -> Optional[list[float]]:
        """The mean requests in flight per bin: in_flight_ns over the bin's traced time (0 in a bin
        with none traced); None without requests."""
        if self.in_flight_ns is None:
            return None
        means = []
        for i, v in enumerate(self.in_flight_ns):
            traced = (self.busy_ns[i] + self.one_off_ns[i] +
                      sum(column[i] for column in self.idle_ns.values()))
            means.append(v / traced if traced > 0 else 0.0)
        return means


def _timeline(d: Optional[dict[str, Any]]) -> Optional[TimelineSummary]:
    if not d:
        return None
    gpu = d.get("gpu")
    return _pick(TimelineSummary, d, gpu=_pick(TimelineGpu, gpu) if gpu else None)


@dataclass(frozen=True)
class GpuProcess:
    """Another compute process that NVML listed on a device during a live collection."""

    pid: int
    memory_bytes: int
    idle_samples_busy: int  #: the device's idle readings during which it ran kernels
    #: ... its busy readings (the GPU took turns between them: this job's kernels took longer)
    busy_samples_busy: int = 0


@dataclass(frozen=True)
class GpuFinding:
    """What the readings mean: kind "clocks", "memory_bound", "sm_underused", "pcie_link",
    "pcie_replays" or "other_process"."""

    kind: str
    what: str
    fix: str


@dataclass(frozen=True)
class GpuThroughput:
    """CUPTI's PM samples of a device in the steady state (or a Kineto trace's range-profiler
    counters: ``source``): each figure its rate while kernels ran (docs/ANALYSIS.md, "GPU
    throughput"); None where the device does not count it."""

    samples: int
    busy_samples: int  #: samples kernels ran at least half of: the figures' basis
    period_ns: int
    kernel_time_share: float  #: of the samples' time, how much kernels ran, 0..1
    sm_active_pct: Optional[float] = None
    tensor_active_pct: Optional[float] = None
    dram_pct: Optional[float] = None
    pcie_read_bytes_per_s: Optional[float] = None
    pcie_write_bytes_per_s: Optional[float] = None
    nvlink_read_bytes_per_s: Optional[float] = None
    nvlink_write_bytes_per_s: Optional[float] = None
    #: "pm_sampling" (PM samples over time) or "range_profiler" (a Kineto trace's range-profiler
    #: counters, one sample per range, each weighing the same)
    source: str = "pm_sampling"


@dataclass(frozen=True)
class GpuMetrics:
    """NVML's readings of a device in the steady state of a live collection (docs/ANALYSIS.md,
    "GPU metrics"); 0 for a figure NVML did not give."""

    samples: int
    busy_samples: int
    idle_samples: int
    period_ns: int
    sm_clock_max_mhz: int
    sm_clock_median_mhz: int  #: over the busy readings
    slow_clock_share: float  #: busy readings under 90% of the maximum SM clock, 0..1
    slow_clock_reason: str  #: "power_cap", "thermal", ..., "" (none given)
    power_median_mw: int
    power_limit_mw: int
    temperature_max_c: int
    pcie_generation: int  #: at its fastest while busy
    pcie_generation_max: int
    pcie_width: int
    pcie_width_max: int
    pcie_replays: int  #: during the collection
    memory_used_max_bytes: int
    memory_total_bytes: int
    other_processes: list[GpuProcess]
    findings: list[GpuFinding]
    throughput: Optional[GpuThroughput] = None  #: PM sampling or range-profiler counters, where any
    throughput_unavailable: str = ""  #: why it did not, where it was asked for


def _gpu_metrics(d: Optional[dict[str, Any]]) -> Optional[GpuMetrics]:
    if not d:
        return None
    throughput = d.get("throughput")
    return _pick(GpuMetrics, d, other_processes=[_pick(GpuProcess, p) for p in d["other_processes"]],
                 findings=[_pick(GpuFinding, f) for f in d["findings"]],
                 throughput=_pick(GpuThroughput, throughput) if throughput else None)


@dataclass(frozen=True)
class DeviceReport(_Idle):
    """One device (per rank when several traces are analysed together).

    Busy and idle time describe the steady state, ``[steady_start_ns, steady_end_ns)``.
    """

    rank: Optional[int]
    device: int
    name: str
    window_ns: int  #: start-up + steady state + wind-down
    steady_start_ns: int
    steady_end_ns: int
    start_up_ns: int  #: before the steady state (the first step, or the first kernel)
    wind_down_ns: int  #: after it
    busy_ns: int  #: steady state: at least one kernel executing (NCCL kernels included)
    idle_ns: int  #: steady state, the sum of idle_by_subcause
    idle_by_cause: dict[str, int]
    idle_by_subcause: dict[str, int]
    one_off: list[OneOffTime]  #: by phase, then most time first
    kernel_count: int
    memcpy_count: int
    memset_count: int
    comm_ns: int  #: NCCL kernels executing
    exposed_comm_ns: int  #: ... while no other kernel executes
    comm_wait_ns: Optional[int]  #: part of comm_ns waiting for peers; None unless all ranks
    #: steady-state steps of the device (Report.steps lists at most 10,000 in all)
    step_count: int = 0
    #: gpuidle's own cost taken out of the steady state's idle time (Report.tracer_time)
    tracer_ns: int = 0
    #: lost time of the steady state: idle_ns plus comm_wait_ns (collectives waiting for peers
    #: are busy by the definition of utilisation, yet do no work)
    lost_ns: int = 0
    #: per kind of collective, most time first (steady state)
    collectives: list[CollectiveStats] = field(default_factory=list)
    #: collectives left out of the report's timing table (JSON ``collective_timings``, which
    #: the merge of ranks reads; not kept in Python)
    collectives_not_listed: int = 0
    #: the whole window, binned, for plots; None in reports of gpuidle before it
    timeline: Optional[TimelineSummary] = field(default=None, repr=False)
    #: NVML's readings in a live collection; None without them
    gpu_metrics: Optional[GpuMetrics] = None
    #: serving (Report.serving): the steady state's time with a request in flight, and the busy
    #: time within it; None where the process marked no requests
    demand_ns: Optional[int] = None
    demand_busy_ns: int = 0

    @property
    def steady_ns(self) -> int:
        """The steady state's length: busy_ns + idle_ns + steady_one_off_ns. In a sampled
        report (:attr:`Report.coverage`) the windows' steady states summed, not the span from
        steady_start_ns to steady_end_ns, which runs over the time between the windows."""
        phase_ns = getattr(self, "_steady_phase_ns", None)  # set by reports read from JSON
        return self.steady_end_ns - self.steady_start_ns if phase_ns is None else phase_ns

    @property
    def steady_one_off_ns(self) -> int:
        """One-off idle time inside the steady state, not in idle_ns (a re-compilation)."""
        return sum(o.ns for o in self.one_off if o.phase == "steady")

    def one_off_in(self, phase: str) -> list[OneOffTime]:
        """The one-off parts of one phase ("start_up", "steady", "wind_down"), most first."""
        if phase not in PHASES:
            raise ValueError(f"unknown phase {phase!r} (phases: {', '.join(PHASES)})")
        return [o for o in self.one_off if o.phase == phase]

    @property
    def busy_share(self) -> float:
        """Busy time over the steady state (what nvidia-smi calls utilisation)."""
        return _share(self.busy_ns, self.steady_ns)

    @property
    def compute_ns(self) -> int:
        """Busy time in which some kernel other than a collective runs: busy_ns minus
        exposed_comm_ns (the headline's "compute", docs/ANALYSIS.md)."""
        return self.busy_ns - self.exposed_comm_ns

    @property
    def lost_share(self) -> float:
        """Lost time (idle plus waiting for peers) over the steady state."""
        return _share(self.lost_ns, self.steady_ns)

    @property
    def comm_wait_share(self) -> Optional[float]:
        """Part of the communication time spent waiting for peers (0..1), None before a merge
        of ranks."""
        return None if self.comm_wait_ns is None else _share(self.comm_wait_ns, self.comm_ns)

    @property
    def idle_share(self) -> float:
        """Idle time over the steady state."""
        return _share(self.idle_ns, self.steady_ns)

    @property
    def label(self) -> str:
        """"GPU 0" or "rank 1 GPU 0"."""
        return f"GPU {self.device}" if self.rank is None else f"rank {self.rank} GPU {self.device}"


@dataclass(frozen=True)
class StepGpu:
    """A live capture's readings of a device within one step (docs/REPORT_SCHEMA.md, "steps"):
    NVML's over the readings taken while a kernel ran, PM sampling's weighted by busy time (None
    where not measured)."""

    samples: int  #: NVML readings in the step
    sm_clock_median_mhz: int
    sm_clock_max_mhz: int
    power_median_mw: int
    power_limit_mw: int
    slow_clock_share: float  #: busy readings under 90% of the maximum SM clock, 0..1
    sm_active_pct: Optional[float] = None
    tensor_active_pct: Optional[float] = None
    dram_pct: Optional[float] = None


@dataclass(frozen=True)
class StepReport(_Idle):
    """One step (``ProfilerStep#N``, :func:`gpuidle.step`) on one device."""

    rank: Optional[int]
    device: int
    name: str
    start_ns: int
    end_ns: int
    busy_ns: int
    idle_ns: int
    idle_by_cause: dict[str, int]
    idle_by_subcause: dict[str, int]
    one_off_ns: int = 0  #: idle time of one-off work inside the step (a re-compilation)
    #: collectives of the step waiting for peers; None unless the ranks were merged
    comm_wait_ns: Optional[int] = None
    gpu: Optional[StepGpu] = None  #: live captures that read the device within the step

    @property
    def duration_ns(self) -> int:
        return self.end_ns - self.start_ns


@dataclass(frozen=True)
class VisibleDevice:
    """A device a process could see, used or not (``CUDA_VISIBLE_DEVICES`` remapping)."""

    rank: Optional[int]
    device: int  #: the CUDA ordinal the process saw
    physical_index: Optional[int]  #: nvidia-smi's index where CUDA_VISIBLE_DEVICES says
    uuid: str  #: "GPU-5e3c..."; "" if unknown
    name: str
    used: bool  #: it ran work


@dataclass(frozen=True)
class RankReport:
    """One process of a job and, after a merge of ranks, how it fared against the others
    (docs/ANALYSIS.md, "Many ranks")."""

    rank: int
    host: str  #: "" where the input does not say
    pid: Optional[int]
    world_size: Optional[int]
    #: live captures: timestamps plus this are Unix time in ns
    wall_clock_offset_ns: Optional[int] = None
    #: set by a merge of ranks (0 before one):
    clock_offset_ns: int = 0  #: added to this rank's timestamps to put it on the job's clock
    collectives: int = 0  #: its collectives in the steady state
    matched: int = 0  #: ... matched with those of every other rank
    arrived_last: int = 0  #: ... that it started last
    #: how long the others waited for this rank alone, summed: at each collective it started
    #: last, its start minus the second latest start
    late_ns: int = 0
    wait_ns: int = 0  #: its own collectives' wait for peers
    #: its own dominant cause: the qualified subcause with most of its lost time, or None
    own_cause: Optional[str] = None
    own_cause_share: float = 0.0  #: that subcause's share of its lost time (0..1)

    @property
    def mean_late_ns(self) -> float:
        """How late it was on average at the collectives it started last (0 if none)."""
        return self.late_ns / self.arrived_last if self.arrived_last > 0 else 0.0


@dataclass(frozen=True)
class ClockAlignment:
    """How a merge of ranks put their clocks on one (docs/ANALYSIS.md, "Clocks")."""

    #: "one clock" (ranks of one host, or ends that already agree) or "aligned" (each host's
    #: offset estimated from the collective ends)
    method: str
    hosts: int  #: clock domains
    residual_ns: int  #: median |end difference| of matched collectives after the alignment
    matched_share: float  #: collectives matched across all ranks / collectives (0..1)


@dataclass(frozen=True)
class Gap:
    """A contiguous idle interval of one device with one cause."""

    rank: Optional[int]
    device: int
    start_ns: int
    end_ns: int
    cause: str
    subcause: str  #: qualified: "sync_bound.host_sync"
    next_op: str  #: the kernel that ended the gap ("" at the end of the window)
    thread: int  #: the launching host thread (0 if unknown)
    evidence: str  #: API call, marker or collective that explains the gap
    call_site: str  #: framework op / Python frame, where captured

    @property
    def duration_ns(self) -> int:
        return self.end_ns - self.start_ns


@dataclass(frozen=True)
class Offender:
    """A place in the program that caused much idle time."""

    cause: str
    subcause: str
    what: str  #: the API call, kernel or range
    site: str  #: framework op and Python frame ("" if unknown)
    idle_ns: int
    count: int  #: gaps it caused


@dataclass(frozen=True)
class PeriodicWork:
    """Host work that recurs in the steady state (checkpointing, evaluation, logging), counted
    once whatever causes its idle time fell under."""

    activity: str  #: "checkpointing", "evaluation" or "logging"
    site: str  #: the program's line that does it
    occurrences: int
    span_ns: int  #: the occurrences' own lengths, summed
    idle_ns: int  #: the GPU's idle time inside them
    idle_by_subcause: dict[str, int]  #: that idle time by "cause.subcause"
    fix: str


@dataclass(frozen=True)
class Advice:
    """The fix for one subcause that lost much time."""

    cause: str
    subcause: str
    share_of_lost_time: float  #: 0..1 over all devices
    fix: str  #: concrete for the evidence seen
    #: the steady-state time the fix can recover, summed over the devices (docs/ANALYSIS.md)
    gain_ns: int = 0
    gain_per_step_ns: Optional[int] = None  #: on the device that gains most per step
    gain_share_of_step: Optional[float] = None  #: that gain over its mean step time, 0..1
    evidence: str = ""  #: what the prediction rests on
    #: its lost time over the devices' steady states, 0..1 (the denominator the text prints)
    share_of_steady_state: float = 0.0
    #: launch_bound.requests_waiting: batching this many requests, the predicted requests per
    #: second and latency (arrival to end); None otherwise
    batch: Optional[int] = None
    predicted_requests_per_s: Optional[float] = None
    predicted_latency_ns: Optional[int] = None


@dataclass(frozen=True)
class Verdict:
    """Whether the steady state lost enough time to be worth fixing: below threshold_share of it
    the report gives no advice and says "nothing worth fixing here" (docs/ANALYSIS.md)."""

    worth_fixing: bool
    lost_ns: int  #: idle plus waiting for peers, summed over the devices' steady states
    steady_ns: int  #: the devices' steady states, summed
    lost_share: float  #: lost_ns over steady_ns, 0..1
    threshold_share: float  #: the analysis option worth_fixing_min_share


def _pick(cls: type, d: dict[str, Any], **extra: Any) -> Any:
    names = cls.__dataclass_fields__  # type: ignore[attr-defined]
    return cls(**{k: copy.deepcopy(v) for k, v in d.items() if k in names and k not in extra},
               **extra)


def _step(d: dict[str, Any]) -> StepReport:
    gpu = d.get("gpu")
    return _pick(StepReport, d, gpu=_pick(StepGpu, gpu) if gpu else None)


def _device(d: dict[str, Any]) -> DeviceReport:
    """A device of the JSON report: its phases become start_up_ns, wind_down_ns and one_off."""
    phases = d["phases"]
    one_off = [OneOffTime(phase=p, kind=part["kind"], ns=part["ns"], count=part["count"],
                          evidence=part["evidence"])
               for p in PHASES for part in phases[p]["parts"]]
    device = _pick(DeviceReport, d, start_up_ns=phases["start_up"]["ns"],
                   wind_down_ns=phases["wind_down"]["ns"], one_off=one_off,
                   collectives=[_pick(CollectiveStats, c) for c in d.get("collectives", [])],
                   timeline=_timeline(d.get("timeline")),
                   gpu_metrics=_gpu_metrics(d.get("gpu_metrics")))
    # The steady state's time, which in a sampled report is not its span: kept off the fields,
    # so that dataclasses.asdict() and == see the report's figures only.
    object.__setattr__(device, "_steady_phase_ns", phases["steady"]["ns"])
    return device


@dataclass(frozen=True)
class Coverage:
    """Which part of the run a sampled collection (``profile(sample="W/P")``) traced: its
    report's figures are sums over the windows, not over the whole run."""

    windows: int  #: traced windows
    traced_ns: int  #: the windows' lengths, summed
    span_ns: int  #: from the first window's start to the run's end
    traced_until_ns: int = 0  #: from the first window's start to the last window's end
    first_window_ns: int = 0  #: the plan, where known (0: not known): the first window,
    window_ns: int = 0  #: then window_ns
    period_ns: int = 0  #: of every period_ns

    @property
    def traced_s(self) -> float:
        return self.traced_ns / 1e9

    @property
    def span_s(self) -> float:
        return self.span_ns / 1e9

    @property
    def traced_share(self) -> float:
        """traced_ns over span_ns (0..1; 0 for an empty span)."""
        return _share(self.traced_ns, self.span_ns)

    def __str__(self) -> str:
        return (f"sampled {self.traced_share:.1%} of {self.span_s:.1f} s in {self.windows} "
                f"window{'' if self.windows == 1 else 's'}")


@dataclass(frozen=True)
class Percentiles:
    p50_ns: int
    p90_ns: int
    p99_ns: int


@dataclass(frozen=True)
class Serving:
    """A serving process's requests in flight during the steady state (docs/ANALYSIS.md,
    "Serving"): idle time with no request in flight is the steady state's one-off part
    ``no_demand``, never lost."""

    requests: int
    requests_per_s: float
    latency: Percentiles  #: arrival to end
    run_known: int  #: requests whose start of work is known: queue and run are theirs
    queue: Percentiles  #: arrival to the start of work
    run: Percentiles  #: the start of work to the end
    in_flight_mean: float  #: time-weighted over the steady state
    in_flight_max: int
    batch_mean: Optional[float] = None  #: requests running per step, where steps are marked


def _serving(d: Optional[dict[str, Any]]) -> Optional[Serving]:
    if not d:
        return None
    return _pick(Serving, d, latency=Percentiles(**d["latency"]), queue=Percentiles(**d["queue"]),
                 run=Percentiles(**d["run"]))


@dataclass(frozen=True, eq=False)
class Report:
    """Why the GPUs were idle: per device, per cause, per step, with offenders and fixes.

    From :func:`gpuidle.analyze` (trace files) or ``profile().report`` (a live capture)::

        report = gpuidle.analyze("trace.json.gz")
        for d in report.devices:
            print(d.label, d.idle_ns / 1e6, "ms idle,", d.cause_shares["sync_bound"], "sync-bound")
        print(report.summary())
        report.save("report.json")
    """

    source: str  #: "pytorch-profiler" or "gpuidle"
    inputs: list[str]
    window_start_ns: int
    window_end_ns: int
    devices: list[DeviceReport]  #: devices that ran work
    visible_device_count: int  #: per process, 0 if unknown
    unused_devices: list[int]  #: visible but never used
    steps: list[StepReport]  #: steady-state steps
    #: where the steps came from: "ProfilerStep", "gpuidle.step", "optimizer.step", "nvtx";
    #: "" when the run has none
    step_source: str
    #: gpuidle's own cost in a live capture: "taken_out" (the figures describe the program
    #: without gpuidle; DeviceReport.tracer_ns), "as_recorded", "not_known" (another profiler)
    tracer_time: str
    #: "recorded"; "made_up" where the device work is CUPTI range-profiler ranges that Kineto
    #: spread evenly (torch.profiler's profiler_metrics): busy and idle time say nothing then
    device_times: str
    warnings: list[str]  #: problems with the input that did not stop the analysis
    longest_gaps: list[Gap]  #: longest first
    offenders: list[Offender]  #: most idle first
    periodic_work: list[PeriodicWork]  #: most idle first
    advice: list[Advice]  #: most lost time first
    #: whether the lost time is worth fixing at all; None without a steady state to judge
    verdict: Optional[Verdict]
    completeness: str  #: "complete", "records_lost" or "unknown" (the source does not say)
    dropped_records: Optional[int]  #: None when unknown
    zero_timestamp_records: int
    record_limit_reached: bool  #: a live capture stopped at its record limit
    #: a sampled collection's windows (its figures sum them); None for any other report
    coverage: Optional[Coverage]
    #: a process that marked serving requests: their rate, latency and concurrency; else None
    serving: Optional[Serving]
    #: the devices each process could see, used or not, where the input lists them
    visible_devices: list[VisibleDevice]
    #: the processes of the job, by rank, where known (one for a rank's own report)
    ranks: list[RankReport]
    #: after a merge of ranks: the rank that made the others wait most, if it made them wait
    #: significantly; None when the ranks arrive together (and for one rank)
    straggler_rank: Optional[int]
    stragglers: list[int]  #: every rank that made the others wait, most late first
    #: how the ranks' clocks were put on one; None without a merge of ranks
    clock: Optional[ClockAlignment]
    options: dict[str, Any] = field(repr=False)  #: the analysis thresholds used
    _native: Any = field(repr=False)

    @classmethod
    def _from_native(cls, native: Any) -> "Report":
        data = json.loads(native.summary_json())  # without the collective timing tables
        c = data["completeness"]
        clock = data.get("clock")
        return cls(
            source=data["source"],
            inputs=list(data["inputs"]),
            window_start_ns=data["window"]["start_ns"],
            window_end_ns=data["window"]["end_ns"],
            devices=[_device(d) for d in data["devices"]],
            visible_device_count=data["visible_device_count"],
            unused_devices=list(data["unused_devices"]),
            steps=[_step(s) for s in data["steps"]],
            step_source=data["step_source"],
            tracer_time=data.get("tracer_time", "not_known"),
            device_times=data.get("device_times", "recorded"),
            warnings=list(data["warnings"]),
            longest_gaps=[_pick(Gap, g) for g in data["longest_gaps"]],
            offenders=[_pick(Offender, o) for o in data["offenders"]],
            periodic_work=[_pick(PeriodicWork, p) for p in data.get("periodic_work", [])],
            advice=[_pick(Advice, a) for a in data["advice"]],
            verdict=_pick(Verdict, data["verdict"]) if data.get("verdict") else None,
            completeness=c["status"],
            dropped_records=c["dropped_records"],
            zero_timestamp_records=c["zero_timestamp_records"],
            record_limit_reached=c["record_limit_reached"],
            coverage=_pick(Coverage, data["coverage"]) if data.get("coverage") else None,
            serving=_serving(data.get("serving")),
            visible_devices=[_pick(VisibleDevice, v) for v in data.get("visible_devices", [])],
            ranks=[_pick(RankReport, r) for r in data.get("ranks", [])],
            straggler_rank=data.get("straggler_rank"),
            stragglers=list(data.get("stragglers", [])),
            clock=_pick(ClockAlignment, clock) if clock and clock.get("method") else None,
            options=data.get("options", {}),
            _native=native,
        )

    # --- figures over all devices -------------------------------------------------------------

    @property
    def window_ns(self) -> int:
        return self.window_end_ns - self.window_start_ns

    @property
    def complete(self) -> Optional[bool]:
        """True if no record was lost, False if some were (or the record limit was reached),
        None if the source does not say (PyTorch profiler traces)."""
        if self.record_limit_reached or self.completeness == "records_lost":
            return False
        return True if self.completeness == "complete" else None

    @property
    def start_up_ns(self) -> int:
        """The longest start-up of the devices (0 without devices)."""
        return max((d.start_up_ns for d in self.devices), default=0)

    @property
    def wind_down_ns(self) -> int:
        """The longest wind-down of the devices."""
        return max((d.wind_down_ns for d in self.devices), default=0)

    @property
    def busy_ns(self) -> int:
        """Steady-state busy time, summed over devices."""
        return sum(d.busy_ns for d in self.devices)

    @property
    def idle_ns(self) -> int:
        """Steady-state idle time, summed over devices."""
        return sum(d.idle_ns for d in self.devices)

    @property
    def idle_by_cause(self) -> dict[str, int]:
        """Idle ns per cause, summed over devices."""
        return {c: sum(d.idle_by_cause.get(c, 0) for d in self.devices) for c in CAUSES}

    @property
    def idle_by_subcause(self) -> dict[str, int]:
        """Idle ns per qualified subcause, summed over devices."""
        return {s: sum(d.idle_by_subcause.get(s, 0) for d in self.devices) for s in SUBCAUSES}

    @property
    def cause_shares(self) -> dict[str, float]:
        """Each cause's share of all idle time (0..1)."""
        total = self.idle_ns
        return {c: _share(ns, total) for c, ns in self.idle_by_cause.items()}

    @property
    def lost_ns(self) -> int:
        """Steady-state lost time (idle plus waiting for peers), summed over devices."""
        return sum(d.lost_ns for d in self.devices)

    @property
    def straggler(self) -> Optional[RankReport]:
        """The straggler's :class:`RankReport` (its lateness and own cause), or None."""
        if self.straggler_rank is None:
            return None
        return next((r for r in self.ranks if r.rank == self.straggler_rank), None)

    def rank(self, rank: int) -> Optional[RankReport]:
        """The :class:`RankReport` of one rank, or None if the report has none for it."""
        return next((r for r in self.ranks if r.rank == rank), None)

    # --- outputs ------------------------------------------------------------------------------

    def format(self, format: str) -> str:
        """The report as "text" (the terminal summary), "json" (schema gpuidle.report/2) or
        "html" (one self-contained page, docs/HTML_REPORT.md)."""
        return str(self._native.format(format))

    def summary(self) -> str:
        """The text summary: the table a person reads in ten seconds."""
        return self.format("text")

    def to_json(self) -> str:
        """The JSON report, exactly as ``gpuidle analyze --format json`` writes it."""
        return self.format("json")

    def to_dict(self) -> dict[str, Any]:
        """The JSON report as plain Python values (a copy, made on each call)."""
        return dict(json.loads(self.to_json()))

    def save(self, path: PathLike, format: Optional[str] = None, *, overwrite: bool = False) -> str:
        """Writes the report to path; returns the path.

        The format comes from the extension when not given (".json" and ".json.gz" are JSON,
        ".html" and ".htm" HTML, anything else text; a ".gz" name is written compressed). Like every file gpuidle writes
        (docs/RELIABILITY.md), it is written completely or not at all, and an existing file is
        never replaced unless ``overwrite=True`` (FileExistsError instead). Even then gpuidle
        replaces only a regular file you may write: never a symbolic link, a device, a FIFO, a
        read-only file or one of the report's input traces.
        """
        target = os.fspath(path)
        self._native.save(_options.native_path(target), format or "", overwrite)
        return target

    def __str__(self) -> str:
        return self.summary()

    def __repr__(self) -> str:
        devices = ", ".join(
            f"{d.label} idle {d.idle_share:.1%} ({d.dominant})" for d in self.devices) or "no devices"
        sampled = f"; {self.coverage}" if self.coverage is not None else ""
        straggler = f"; straggler rank {self.straggler_rank}" if self.straggler_rank is not None else ""
        return f"<gpuidle.Report {self.source}: {devices}{sampled}{straggler}>"

    def to_html(self) -> str:
        """The HTML report, exactly as ``gpuidle analyze --format html`` writes it: one
        self-contained page (docs/HTML_REPORT.md)."""
        return self.format("html")

    def _repr_html_(self) -> str:
        return self.to_html()
