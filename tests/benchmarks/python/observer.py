"""Does the report describe the program as it runs without gpuidle? (issue 26)

  python3 observer.py --workload resnet50 [--rounds 6] [--profiles 3] [--steps N]
                      [--sample W/P --duration S] [--out DIR] [--label NAME] [--as-recorded]

One process, one workload (workloads.py). After a warm-up (steps, and one profile thrown away:
CUPTI's first attach in a process is slow), untraced rounds and --profiles traced rounds:

  untraced x rounds/2, then (traced, untraced) x profiles, then untraced up to --rounds in all

(traced: gpuidle.profile() around the round, a step mark per step). Each profile's untraced
truth is measured in the same process, next to it: the mean step time of the untraced rounds
just before and just after it (each timed from a synchronize to a synchronize; the host's speed
drifts by 3-10% of a launch-bound step between rounds) minus the busy time per step that
gpuidle reports (the GPU's busy time barely changes under tracing). gpuidle's claim is the idle
time per steady step of the report. The result line describes the last profile (whose report
and trace --out keeps): both figures and their difference over the untraced step time, every
profile's error and their median (the verdict: within 5%, the issue's bar), the busy time per
step, the dominant cause, the top advice's predicted gain per step and the cap it must stay
under (untraced step - busy), and what gpuidle said it took out of the answer (tracer_ns).

--sample W/P profiles --duration seconds with sample="W/P" (a sampled collection) instead of
one round; the truth's untraced rounds are the same. --as-recorded asks for the timeline as
recorded (as_recorded=True): the uncorrected figures, for comparison. --out DIR keeps the
report (JSON) and the trace (gzip) under DIR, named after --label (default: the workload).

--fix WORKLOAD (resnet50_graphed) then builds the fix that the launch-bound advice names in the
same process and times its untraced rounds: the predicted gain (the launch-bound advice's gains
per step of the traced report) against the measured one (the untraced step time before minus
after), on a `gain` line; the issue's bar is within 20%.

--leave-out PARTS (comma-separated; a lab probe of this benchmark, patched in from here, never a
user setting) prices the Python layer's parts: `torch` (no PyTorch integration: module and
optimizer hooks, sync-site marks), `call-sites` (no call-site provider), `sampler` (no host-stack
sampler: host_sample_ms=0).
"""
import argparse
import gc
import json
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import workloads  # noqa: E402


def timed_round(torch, step, steps):
    """ms per step over one untraced round, from a synchronize to a synchronize."""
    gc.collect()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(steps):
        step()
    torch.cuda.synchronize()
    return (time.perf_counter() - t0) * 1e3 / steps


def traced(gpuidle, torch, step, steps, keywords, duration=0.0):
    """(report, ms per step of the traced run as the program saw it, steps run)."""
    gc.collect()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    n = 0
    with gpuidle.profile(quiet=True, **keywords) as p:
        while (n < steps) if not duration else (time.perf_counter() - t0 < duration):
            with p.step():
                step()
            n += 1
        torch.cuda.synchronize()
    return p.report, (time.perf_counter() - t0) * 1e3 / max(n, 1), n


def thread_cpu_ms():
    """{(thread id, name): CPU ms so far} of this process's threads (Linux /proc)."""
    import threading

    tick = os.sysconf("SC_CLK_TCK")
    python_names = {t.native_id: t.name for t in threading.enumerate()}
    times = {}
    for tid in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{tid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            with open(f"/proc/self/task/{tid}/comm") as f:
                name = f.read().strip()
        except OSError:
            continue  # the thread ended
        name = python_names.get(int(tid), name)
        times[(int(tid), name)] = (int(fields[11]) + int(fields[12])) * 1e3 / tick
    return times


def cpu_placement():
    """The CPUs this process may run on, and which of them share a core (SMT siblings)."""
    cpus = sorted(os.sched_getaffinity(0))
    siblings = set()
    for c in cpus:
        try:
            with open(f"/sys/devices/system/cpu/cpu{c}/topology/thread_siblings_list") as f:
                siblings.add(f.read().strip())
        except OSError:
            pass
    return f"cpus={','.join(map(str, cpus))} cores={' '.join(sorted(siblings))}"


def device_figures(report):
    """Per steady step of the busiest device: busy ms, idle ms, step ms, steps, dominant."""
    d = max(report.devices, key=lambda d: d.busy_ns)
    steps = d.step_count
    if steps == 0:
        return None
    causes = d.idle_by_cause
    dominant = max(causes, key=causes.get) if any(causes.values()) else "none"
    return {
        "busy_ms": d.busy_ns / steps / 1e6,
        "idle_ms": d.idle_ns / steps / 1e6,
        "step_ms": d.steady_ns / steps / 1e6,
        "steps": steps,
        "dominant": dominant,
        "shares": {c: round(s, 4) for c, s in d.cause_shares.items()},
        "tracer_ms": (getattr(d, "tracer_ns", 0) or 0) / steps / 1e6,
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--workload", required=True, choices=workloads.NAMES)
    parser.add_argument("--rounds", type=int, default=6, help="untraced rounds (half before)")
    parser.add_argument("--profiles", type=int, default=3,
                        help="traced rounds, each between two untraced rounds")
    parser.add_argument("--steps", type=int, default=0, help="steps per round")
    parser.add_argument("--sample", default="", help='sample="W/P" (with --duration)')
    parser.add_argument("--duration", type=float, default=0.0, help="seconds of the profile")
    parser.add_argument("--out", default="", help="folder for the report and the trace")
    parser.add_argument("--label", default="", help="name of the files and the result")
    parser.add_argument("--leave-out", default="", help="torch,call-sites,sampler (a probe)")
    parser.add_argument("--fix", default="", choices=("",) + workloads.NAMES,
                        help="the fixed workload whose untraced gain is measured")
    parser.add_argument("--as-recorded", action="store_true",
                        help="the timeline as recorded (as_recorded=True)")
    args = parser.parse_args()
    label = args.label or args.workload

    import gpuidle  # before torch, as a user's script may
    import gpuidle._call_sites  # noqa: F401  (--leave-out patches them)
    import gpuidle._profile  # noqa: F401

    import torch

    keywords = {}
    for part in filter(None, args.leave_out.split(",")):
        if part == "torch":
            gpuidle._profile.Profile._install_torch = lambda self: None
        elif part == "call-sites":
            gpuidle._call_sites.enable = lambda: None
        elif part == "sampler":
            keywords["host_sample_ms"] = 0
        else:
            parser.error(f"--leave-out: unknown part {part!r}")
    step, steps = workloads.make(args.workload)
    steps = args.steps or steps
    for _ in range(max(3, steps // 4)):
        step()
    if args.sample:
        keywords["sample"] = args.sample
    if args.as_recorded:
        keywords["as_recorded"] = True
    traced(gpuidle, torch, step, max(3, steps // 4), dict(keywords))  # CUPTI's first attach, thrown away

    untraced = [timed_round(torch, step, steps) for _ in range(args.rounds // 2)]
    saved = dict(keywords)
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        saved["out"] = os.path.join(args.out, f"{label}.report.json")
        saved["format"] = "json"
        if not args.sample:
            saved["trace"] = os.path.join(args.out, f"{label}.trace.json.gz")
        for path in (saved["out"], saved.get("trace")):
            if path and os.path.exists(path):
                os.remove(path)
    # Each profile is judged against the untraced rounds on either side of it: the host's speed
    # drifts between rounds (3-10% of a launch-bound step), more than between neighbours.
    profiles = []  # (report, traced ms/step, reference untraced ms/step)
    cpu_before = thread_cpu_ms()
    for i in range(args.profiles):
        last = i == args.profiles - 1
        report, traced_ms, n = traced(gpuidle, torch, step, steps, saved if last else keywords,
                                      args.duration)
        before = untraced[-1]
        untraced.append(timed_round(torch, step, steps))
        profiles.append((report, traced_ms, (before + untraced[-1]) / 2))
    cpu_after = thread_cpu_ms()
    # Which threads ran during the traced rounds, and how much (the program's, gpuidle's, CUPTI's).
    used = sorted(((cpu_after[k] - cpu_before.get(k, 0.0), k) for k in cpu_after), reverse=True)
    print(f"placement: {cpu_placement()}", flush=True)
    print("thread cpu ms in the traced rounds: " +
          " ".join(f"{name}/{tid}={ms:.0f}" for ms, (tid, name) in used[:8] if ms > 0), flush=True)
    untraced += [timed_round(torch, step, steps) for _ in range(args.rounds - args.rounds // 2 - 1)]
    errors = []
    for report, _, reference in profiles:
        f = device_figures(report) if report is not None else None
        if f is not None:
            errors.append((f["idle_ms"] - (reference - f["busy_ms"])) / reference)
    report, traced_ms, u = profiles[-1]  # the one whose report and trace are kept
    head = f"result label={label} workload={args.workload} mode={'sampled-' + args.sample if args.sample else 'full'}"
    if args.leave_out:
        head += f" leave_out={args.leave_out}"
    if report is None:
        print(f"{head} failed=\"no report\"", flush=True)
        return 1
    f = device_figures(report)
    if f is None:
        print(f"{head} failed=\"no steady steps\"", flush=True)
        return 1
    truth = u - f["busy_ms"]
    error = (f["idle_ms"] - truth) / u
    median_error = statistics.median(errors)
    cap = max(truth, 0.0)
    top = report.advice[0] if report.advice else None
    gain = (top.gain_per_step_ns or 0) / 1e6 if top else 0.0
    print(f"untraced ms/step: {' '.join(f'{x:.3f}' for x in untraced)}", flush=True)
    print(f"shares: {json.dumps(f['shares'])}", flush=True)
    if top:
        print(f"top advice: {top.subcause} gain {gain:.2f} ms/step: {top.fix[:160]}", flush=True)
    print(f"{head} untraced_step_ms={u:.3f} traced_step_ms={traced_ms:.3f} "
          f"report_step_ms={f['step_ms']:.3f} busy_ms={f['busy_ms']:.3f} "
          f"truth_idle_ms={truth:.3f} reported_idle_ms={f['idle_ms']:.3f} "
          f"error_of_step={error * 100:+.1f}% "
          f"profile_errors={','.join(f'{e * 100:+.1f}%' for e in errors)} "
          f"median_error={median_error * 100:+.1f}% "
          f"verdict={'PASS' if abs(median_error) <= 0.05 else 'FAIL'} "
          f"steps={f['steps']} dominant={f['dominant']} tracer_ms={f['tracer_ms']:.3f} "
          f"top_gain_ms={gain:.3f} gain_cap_ms={cap:.3f} "
          f"gain_within_cap={'yes' if gain <= cap * 1.0001 + 1e-3 else 'NO'}", flush=True)
    if args.fix:
        measure_fix(torch, args, report, statistics.median(untraced))
    return 0


def measure_fix(torch, args, report, untraced_ms):
    """The `gain` line: the launch-bound advice's predicted gain against the untraced gain of
    the fix, measured in this process."""
    advice = [a for a in report.advice if a.cause == "launch_bound"]
    predicted = sum((a.gain_per_step_ns or 0) for a in advice) / 1e6
    fix_step, _ = workloads.make(args.fix)
    steps = args.steps or workloads.STEPS_PER_ROUND[args.fix]
    for _ in range(max(3, steps // 4)):
        fix_step()
    fixed = [timed_round(torch, fix_step, steps) for _ in range(args.rounds)]
    after = statistics.median(fixed)
    measured = untraced_ms - after
    error = (predicted - measured) / measured if measured > 0 else float("inf")
    print(f"fixed ms/step: {' '.join(f'{x:.3f}' for x in fixed)}", flush=True)
    for a in advice:
        print(f"advice {a.subcause} gain {(a.gain_per_step_ns or 0) / 1e6:.2f} ms/step: "
              f"{a.fix[:160]}", flush=True)
    print(f"gain label={args.label or args.workload} fix={args.fix} untraced_step_ms={untraced_ms:.3f} "
          f"fixed_step_ms={after:.3f} measured_gain_ms={measured:.3f} predicted_gain_ms={predicted:.3f} "
          f"error={error * 100:+.1f}% verdict={'PASS' if abs(error) <= 0.20 else 'FAIL'}", flush=True)


if __name__ == "__main__":
    sys.exit(main())
