"""What one profile costs a PyTorch training job, start and stop included (issue 15).

  python3 profile_overhead.py --workload tiny_mlp|resnet50|gpt2|healthy \\
      --profiler none|bare|bare-timed|gpuidle|gpuidle-sampled|torch [--rounds 7] [--steps N]

One process, one workload (workloads.py), one profiler. After a warm-up (a few steps, one
untraced round, and one traced round that is thrown away: CUPTI's first attach in a process
costs far more than later ones, and a long job pays it once), untraced and traced rounds
alternate, --rounds of each. A round is the workload's steps_per_round steps, timed with
time.perf_counter() around everything a user waits for:

  untraced:  steps; torch.cuda.synchronize()
  traced:    with <profiler>: steps (with the profiler's step marker); torch.cuda.synchronize()

so a traced round includes the profiler's start and its stop (for gpuidle: flush, detach,
analysis and the Report object). Prints a `round` line per pair and then

  result workload=... profiler=... rounds=7 steps=... untraced_ms=<median> traced_ms=<median>
      ratio=<traced/untraced> pair_ratio=<median of each pair's ratio> per_step_added_ms=...

Profilers: gpuidle (gpuidle.profile(quiet=True)); gpuidle-sampled (the same with
sample=--window, "W/P" seconds; a gpuidle without that keyword prints a `skip` result);
torch (torch.profiler.profile with CPU and CUDA activities; its events are parsed lazily and
nothing is exported, so its figure is what collection costs, a lower bound of what a user who
looks at the trace pays; torch.profiler keeps CUPTI once it ran, hence a process of its own);
bare and bare-timed (tests/benchmarks/overhead/bare_cupti_collector.cc, found through
GPUIDLE_BARE_CUPTI or the library path: CUPTI recording kernels only, the floor of a kernel
tracer; bare-timed also times every launch call in CUPTI callbacks, the floor of knowing when
the host launched; both stop and detach CUPTI at the end of each round, as gpuidle does);
none (untraced against untraced: the noise floor). For gpuidle each round's `cost` stages
(Profile.cost, milliseconds, where the installed gpuidle has it) are printed with their
medians. GPUIDLE_BENCH_LEAVE_OUT (a probe build only) is passed through and echoed.

  python3 profile_overhead.py --workload tiny_mlp --profiler gpuidle-sampled --duration 60

runs the workload for 60 s untraced, counting steps, then 60 s under one profile, and reports
the steps/s of both (ratio = untraced / traced steps per second, start and stop included);
for gpuidle also each device's idle share and idle time by cause, to compare a sampled
collection's shares with a full trace's (--save-report keeps the report).

--dry-run prints the plan and an estimate of the run's time without touching torch or a GPU;
run_profile_overhead.sh runs every configuration in its own process, interleaved, and prints
the table for docs/PERFORMANCE.md.
"""
import argparse
import ctypes
import gc
import json
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import workloads  # noqa: E402  (needs no torch)

PROFILERS = ("none", "bare", "bare-timed", "gpuidle", "gpuidle-sampled", "torch")

# Guesses for the time estimate only: a traced round's length over an untraced one's, and
# what each profile adds once (seconds).
_SLOWDOWN = {"none": 1.0, "bare": 1.15, "bare-timed": 1.3, "gpuidle": 1.5,
             "gpuidle-sampled": 1.2, "torch": 2.0}
_FIXED_S = {"none": 0.0, "bare": 0.01, "bare-timed": 0.01, "gpuidle": 0.05,
            "gpuidle-sampled": 0.05, "torch": 0.3}


def warmup_steps(steps_per_round):
    return max(3, steps_per_round // 4)


def estimate_s(workload, profiler, rounds, steps=None, duration=None):
    """A rough guess of one process's wall time on an H200 (workloads.STEP_MS)."""
    steps = steps or workloads.STEPS_PER_ROUND[workload]
    round_s = steps * workloads.STEP_MS[workload] / 1e3
    warm = warmup_steps(steps) * workloads.STEP_MS[workload] / 1e3 + round_s * (
        1 + _SLOWDOWN[profiler]) + _FIXED_S[profiler] + 1.0  # + CUPTI's first attach
    if duration:
        return workloads.STARTUP_S[workload] + warm + 2 * duration + _FIXED_S[profiler]
    traced = round_s * _SLOWDOWN[profiler] + _FIXED_S[profiler]
    return workloads.STARTUP_S[workload] + warm + rounds * (round_s + traced)


# --- the profilers ---------------------------------------------------------------------------


class NoProfiler:
    """Traced rounds that trace nothing: the noise floor."""

    mark = None

    def start(self):
        pass

    def stop(self):
        return {}


class BareCupti:
    """libgpuidle_bare_cupti.so through ctypes: start, then stop and detach."""

    mark = None

    def __init__(self, times_launches):
        # Read by gpuidle_bare_cupti_start() at every start (getenv): set before the first.
        os.environ["GPUIDLE_BARE_TIMES_LAUNCHES"] = "1" if times_launches else "0"
        self.lib = ctypes.CDLL(os.environ.get("GPUIDLE_BARE_CUPTI", "libgpuidle_bare_cupti.so"))
        self.lib.gpuidle_bare_cupti_kernel_records.restype = ctypes.c_longlong
        self.lib.gpuidle_bare_cupti_launch_calls.restype = ctypes.c_longlong
        self.times_launches = times_launches
        self.kernels = self.launches = 0

    def start(self):
        if self.lib.gpuidle_bare_cupti_start() != 1:
            raise RuntimeError("the bare CUPTI collector did not start")

    def stop(self):
        if self.lib.gpuidle_bare_cupti_stop() != 1 or self.lib.gpuidle_bare_cupti_detach() != 1:
            raise RuntimeError("the bare CUPTI collector did not stop and detach")
        kernels = self.lib.gpuidle_bare_cupti_kernel_records()
        launches = self.lib.gpuidle_bare_cupti_launch_calls()
        info = {"kernels": kernels - self.kernels}
        if self.times_launches:
            info["launch_calls"] = launches - self.launches
        self.kernels, self.launches = kernels, launches
        return info


def sample_refusal(window):
    """Why the installed gpuidle refuses profile(sample=window), or None if it takes it."""
    import gpuidle

    try:
        gpuidle.profile(quiet=True, sample=window)
    except (TypeError, ValueError) as e:
        return f"{type(e).__name__}: {e}"
    return None


class Gpuidle:
    """A new gpuidle.profile(quiet=True, ...) per round, as `with gpuidle.profile():` makes."""

    def __init__(self, sample=None):
        import gpuidle

        self.gpuidle = gpuidle
        self.keywords = {"sample": sample} if sample else {}
        self.sampled = sample is not None
        self.p = None
        self.mark = None

    def start(self):
        self.p = self.gpuidle.profile(quiet=True, **self.keywords)
        if not self.p.start():
            raise RuntimeError(f"gpuidle did not start: {self.p.error}")
        self.mark = self.p.step

    def stop(self):
        report = self.p.stop()
        info = {}
        if report is None:
            if not self.sampled:  # a sampled profile may end between its windows
                raise RuntimeError(f"gpuidle collected nothing ({self.p.error or 'no report'})")
            info["kernels"] = 0
        else:
            info["kernels"] = sum(d.kernel_count for d in report.devices)
        cost = getattr(self.p, "cost", None)
        if callable(cost):
            cost = cost()
        if isinstance(cost, dict):
            info["cost"] = {str(k): float(v) for k, v in cost.items()}
        return info


class TorchProfiler:
    def __init__(self):
        from torch.profiler import ProfilerActivity, profile

        self.profile = profile
        self.activities = [ProfilerActivity.CPU, ProfilerActivity.CUDA]
        self.prof = None
        self.mark = None

    def start(self):
        self.prof = self.profile(activities=self.activities)
        self.prof.__enter__()
        self.mark = self.prof.step

    def stop(self):
        self.prof.__exit__(None, None, None)
        return {}


def make_profiler(name, window):
    if name == "none":
        return NoProfiler()
    if name in ("bare", "bare-timed"):
        return BareCupti(times_launches=name == "bare-timed")
    if name == "gpuidle":
        return Gpuidle()
    if name == "gpuidle-sampled":
        return Gpuidle(sample=window)
    return TorchProfiler()


# --- timing ----------------------------------------------------------------------------------


def timed_round(torch, step, steps, profiler=None):
    """(ms around the whole round, the profiler's info). info["parts"] splits the round where
    the program's thread spent it (ms): "start" (the profiler's start), "steps" (the first
    step's start to the last step's end, the host's view: the GPU may still run), "end" (the
    final synchronize and the profiler's stop), and "step_us", the median of the steps' host
    times (each from a step's start to the next's, the profiler's step marker included): a
    fixed cost and a per-step cost that a round's total mixes."""
    gc.collect()
    torch.cuda.synchronize()
    clock = time.perf_counter
    starts = [0.0] * (steps + 1)
    t0 = clock()
    info = {}
    if profiler is None:
        started = clock()
        for i in range(steps):
            starts[i] = clock()
            step()
        starts[steps] = clock()
        torch.cuda.synchronize()
    else:
        profiler.start()
        started = clock()
        mark = profiler.mark
        try:
            for i in range(steps):
                starts[i] = clock()
                step()
                if mark is not None:
                    mark()
            starts[steps] = clock()
            torch.cuda.synchronize()
        finally:
            info = profiler.stop()
    end = clock()
    info = dict(info)
    info["parts"] = {
        "start": (started - t0) * 1e3,
        "steps": (starts[steps] - starts[0]) * 1e3,
        "end": (end - starts[steps]) * 1e3,
        "step_us": statistics.median(b - a for a, b in zip(starts, starts[1:])) * 1e6,
    }
    return (end - t0) * 1e3, info


def timed_duration(torch, step, seconds, profiler=None):
    """Steps for `seconds`, then the profile's stop: (steps, total s, start ms, stop ms, info)."""
    gc.collect()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    if profiler is not None:
        profiler.start()
    started = time.perf_counter()
    mark = profiler.mark if profiler is not None else None
    steps = 0
    while time.perf_counter() - started < seconds:
        step()
        if mark is not None:
            mark()
        steps += 1
    torch.cuda.synchronize()
    stopping = time.perf_counter()
    info = profiler.stop() if profiler is not None else {}
    end = time.perf_counter()
    return steps, end - t0, (started - t0) * 1e3, (end - stopping) * 1e3, info


def info_text(info):
    parts = [f"{k}={v}" for k, v in info.items() if k not in ("cost", "parts")]
    for key in ("parts", "cost"):
        if key in info:
            parts.append(key + " " + " ".join(f"{k}={v:.3f}" for k, v in info[key].items()))
    return " ".join(parts)


def cost_medians(infos):
    stages = {}
    for info in infos:
        for stage, ms in info.get("cost", {}).items():
            stages.setdefault(stage, []).append(ms)
    return {stage: statistics.median(v) for stage, v in stages.items()}


def print_shares(report):
    """Each device's idle share and idle time by cause (for sampled vs full comparisons)."""
    if report is None:
        print("shares none: no report", flush=True)
        return
    for d in report.devices:
        causes = " ".join(f"{c}={s:.4f}" for c, s in d.cause_shares.items())
        print(f"shares device=\"{d.label}\" steady_s={d.steady_ns / 1e9:.3f} "
              f"idle_share={d.idle_share:.4f} busy_share={d.busy_share:.4f} "
              f"kernels={d.kernel_count} steps={d.step_count} dominant={d.dominant} {causes}",
              flush=True)
    data = getattr(report, "_data", {}) or {}
    for key, value in data.items():
        if "sampl" in key:  # whatever the sampled collection says about itself
            print(f"report {key}={json.dumps(value, sort_keys=True)}", flush=True)


# --- main ------------------------------------------------------------------------------------


def dry_run(args):
    names = args.workload.split(",")
    profilers = args.profiler.split(",")
    unknown = [n for n in names if n not in workloads.NAMES] + [
        n for n in profilers if n not in PROFILERS]
    if unknown:
        raise SystemExit(f"--dry-run: unknown workload or profiler: {', '.join(unknown)}")
    total = 0.0
    for w in names:
        steps = args.steps or workloads.STEPS_PER_ROUND[w]
        for p in profilers:
            s = estimate_s(w, p, args.rounds, steps, args.duration)
            total += s
            mode = (f"duration {args.duration} s untraced, then {args.duration} s traced"
                    if args.duration else
                    f"warm-up {warmup_steps(steps)} steps + 1 untraced + 1 throwaway traced round, "
                    f"then {args.rounds} untraced / {args.rounds} traced rounds of {steps} steps")
            print(f"plan workload={w} profiler={p}: {mode}; estimate {s:.0f} s")
    print(f"estimate total={total:.0f} s for {len(names) * len(profilers)} process(es) "
          f"(guesses for an H200: workloads.STEP_MS, STARTUP_S)")
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--workload", required=True,
                        help=f"one of {', '.join(workloads.NAMES)} (a comma list with --dry-run)")
    parser.add_argument("--profiler", required=True,
                        help=f"one of {', '.join(PROFILERS)} (a comma list with --dry-run)")
    parser.add_argument("--rounds", type=int, default=7, help="untraced and traced rounds each")
    parser.add_argument("--steps", type=int, default=0,
                        help="steps per round (default: the workload's steps_per_round)")
    parser.add_argument("--window", default="1/10",
                        help="gpuidle-sampled: sample='W/P', W seconds collected every P")
    parser.add_argument("--compare-full", type=float, default=0, metavar="SECONDS",
                        help="--duration with gpuidle-sampled: then trace the same loop in full "
                             "for SECONDS and compare the cause shares")
    parser.add_argument("--duration", type=float, default=0, metavar="SECONDS",
                        help="steps/s over SECONDS untraced, then SECONDS under one profile")
    parser.add_argument("--save-report", metavar="PATH",
                        help="--duration with gpuidle: write the report here (JSON)")
    parser.add_argument("--dry-run", action="store_true",
                        help="print the plan and a time estimate; needs neither torch nor a GPU")
    args = parser.parse_args()
    if args.rounds < 1:
        parser.error("--rounds must be at least 1")
    if args.dry_run:
        return dry_run(args)
    if args.workload not in workloads.NAMES:
        parser.error(f"--workload: one of {', '.join(workloads.NAMES)}")
    if args.profiler not in PROFILERS:
        parser.error(f"--profiler: one of {', '.join(PROFILERS)}")

    head = f"workload={args.workload} profiler={args.profiler}"
    leave_out = os.environ.get("GPUIDLE_BENCH_LEAVE_OUT", "")
    if leave_out:
        head += f" leave_out={leave_out}"
    if args.profiler == "gpuidle-sampled":
        head += f" window={args.window}"
        refusal = sample_refusal(args.window)
        if refusal is not None:  # before torch and the model: a skip costs no GPU time
            print(f"result {head} skip=\"gpuidle.profile(sample='{args.window}') refused: "
                  f"{refusal}\"", flush=True)
            return 0
    try:
        return measure(args, head)
    except (RuntimeError, ImportError, OSError) as e:  # a result line, for the table
        print(f"result {head} failed=\"{type(e).__name__}: {e}\"", flush=True)
        return 1


def measure(args, head):
    if args.profiler.startswith("gpuidle"):
        import gpuidle  # before torch, as a user's script may do; it hooks torch at start

        print(f"gpuidle {gpuidle.__version__} from {os.path.dirname(gpuidle.__file__)}")
    import torch

    step, steps = workloads.make(args.workload)
    steps = args.steps or steps
    profiler = make_profiler(args.profiler, args.window)
    estimate = estimate_s(args.workload, args.profiler, args.rounds, steps, args.duration)
    print(f"plan {head} rounds={args.rounds} steps={steps} duration={args.duration:g} "
          f"estimate_s={estimate:.0f}", flush=True)

    for _ in range(warmup_steps(steps)):  # allocator, cuBLAS/cuDNN handles, kernel selection
        step()
    warm_untraced, _ = timed_round(torch, step, steps)
    first_traced, info = timed_round(torch, step, steps, profiler)
    print(f"warm-up: {warmup_steps(steps)} steps, one untraced round ({warm_untraced:.1f} ms), "
          f"one traced round thrown away ({first_traced:.1f} ms: CUPTI's first attach in a "
          f"process is slow, a long job pays it once) {info_text(info)}", flush=True)
    if args.duration:
        return duration_mode(args, torch, step, profiler, head)
    return rounds_mode(args, torch, step, steps, profiler, head, first_traced)


def rounds_mode(args, torch, step, steps, profiler, head, first_traced):
    untraced, traced, infos = [], [], []
    for i in range(args.rounds):
        u, _ = timed_round(torch, step, steps)
        t, info = timed_round(torch, step, steps, profiler)
        untraced.append(u)
        traced.append(t)
        infos.append(info)
        print(f"round {i} untraced_ms={u:.3f} traced_ms={t:.3f} ratio={t / u:.4f} "
              f"{info_text(info)}", flush=True)
    u, t = statistics.median(untraced), statistics.median(traced)
    pair = statistics.median(b / a for a, b in zip(untraced, traced))
    costs = cost_medians(infos)
    cost = "".join(f" cost_{k}_ms={v:.3f}" for k, v in costs.items())
    if costs:
        print("cost medians (ms): " + " ".join(f"{k}={v:.3f}" for k, v in costs.items()))
    print(f"result {head} rounds={args.rounds} steps={steps} untraced_ms={u:.3f} "
          f"traced_ms={t:.3f} ratio={t / u:.4f} pair_ratio={pair:.4f} "
          f"per_step_added_ms={(t - u) / steps:.4f} first_traced_ms={first_traced:.1f}{cost}",
          flush=True)
    return 0


def duration_mode(args, torch, step, profiler, head):
    d = args.duration
    n_u, s_u, _, _, _ = timed_duration(torch, step, d)
    print(f"untraced: {n_u} steps in {s_u:.3f} s", flush=True)
    n_t, s_t, start_ms, stop_ms, info = timed_duration(torch, step, d, profiler)
    print(f"traced: {n_t} steps in {s_t:.3f} s (start {start_ms:.1f} ms, stop {stop_ms:.1f} ms) "
          f"{info_text(info)}", flush=True)
    sps_u, sps_t = n_u / s_u, n_t / s_t
    if isinstance(profiler, Gpuidle):
        report = profiler.p.report
        print_shares(report)
        if args.save_report and report is not None:
            report.save(args.save_report, overwrite=True)
            print(f"report written to {args.save_report}")
        if profiler.sampled and args.compare_full > 0 and report is not None:
            # The same run, traced in full for a while: the sampled shares should match it.
            full = Gpuidle()
            timed_duration(torch, step, args.compare_full, full)
            print("full trace of the same run:", flush=True)
            print_shares(full.p.report)
            worst = max(abs(s - full.p.report.devices[0].cause_shares[c]) * 100
                        for c, s in report.devices[0].cause_shares.items())
            print(f"shares_vs_full max_difference_points={worst:.2f} "
                  f"{'PASS' if worst <= 5 else 'FAIL'} (<= 5)", flush=True)
    print(f"result {head} duration_s={d:g} untraced_steps={n_u} traced_steps={n_t} "
          f"untraced_steps_per_s={sps_u:.3f} traced_steps_per_s={sps_t:.3f} "
          f"ratio={sps_u / sps_t:.4f} start_ms={start_ms:.1f} stop_ms={stop_ms:.1f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
