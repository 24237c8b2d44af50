#!/usr/bin/env python3
"""Proves the predicted gains of gpuidle's advice on the GPU (issue 18): each ground-truth scenario
of examples/python runs once as it is and once with the fix that the advice names (--fix), both
under gpuidle.profile(). The prediction is the "before" report's gain per step for the scenario's
cause; the measured gain is the drop in mean step time from the "before" report to the "after"
one (the same profiler in both, as the prediction is made on a profiled run). A prediction passes
within +-20% of the measured gain. Beside them: the GPU-busy time per step, the median duration
of the kernel with most GPU time, the SM clock and power nvidia-smi sampled, and the untraced
step times (--plain): what else changed between the two runs.

  PYTHONPATH=<package> tests/gpu/python/advice_gains.py OUT_DIR [GPUIDLE_CLI]

Writes OUT_DIR/<scenario>.{before,after}.json (+ .trace.json; tests/data/gpu_runs keeps them as
<scenario>.{before,after}.report.json), OUT_DIR/gains.md (the table) and,
with the CLI, OUT_DIR/<scenario>.diff.txt (gpuidle diff before after). Exit status 1 if a check
fails.
"""
import json
import os
import re
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLES = os.path.normpath(os.path.join(HERE, "..", "..", "..", "examples", "python"))

# (scenario, the subcauses whose advice the fix follows, profiled steps)
SCENARIOS = [
    ("dataloader_starved", ("data_starved.dataloader",), 30),
    ("item_sync", ("sync_bound.host_sync",), 20),
    ("pageable_h2d", ("data_starved.h2d_copy",), 8),
    ("tiny_mlp_launch_bound", ("launch_bound.launch_overhead", "launch_bound.kernel_gap"), 30),
]
TOLERANCE = 0.20


def run(args, log, clocks=None):
    """Runs a scenario; with `clocks` (a list), appends the GPU's median SM clock (MHz) and power
    (W) while it ran, as nvidia-smi samples them every 50 ms."""
    sampler = None
    if clocks is not None:
        sampler = subprocess.Popen(["nvidia-smi", "--query-gpu=clocks.sm,power.draw",
                                    "--format=csv,noheader,nounits", "-lms", "50"],
                                   stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    with open(log, "w") as f:
        p = subprocess.run(args, stdout=f, stderr=subprocess.STDOUT, timeout=300)
    if sampler is not None:
        sampler.terminate()
        samples = []
        for line in sampler.communicate()[0].splitlines():
            try:
                mhz, watts = (float(x) for x in line.split(","))
            except ValueError:
                continue
            samples.append((mhz, watts))
        # The busiest half of the samples: the steps, not the process's start-up.
        samples.sort(key=lambda x: x[1])
        busy = samples[len(samples) // 2:] or [(float("nan"), float("nan"))]
        clocks.append((statistics.median(x[0] for x in busy), statistics.median(x[1] for x in busy)))
    with open(log) as f:
        text = f.read()
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(args)}: exit {p.returncode}\n{text[-2000:]}")
    return text


def mean_step_ns(report):
    """Mean step time of the report's steady steps (device rows of the first device)."""
    steps = [s for s in report["steps"] if s["device"] == report["devices"][0]["device"]]
    if not steps:
        raise RuntimeError("the report has no steps")
    return statistics.mean(s["end_ns"] - s["start_ns"] for s in steps)


def mean_busy_ns(report):
    """Mean GPU-busy time per steady step (the GPU work that a fix of idle time cannot remove)."""
    steps = [s for s in report["steps"] if s["device"] == report["devices"][0]["device"]]
    return statistics.mean(s["busy_ns"] for s in steps)


def kernel_durations(trace_path):
    """{kernel name: [durations in us]} of a gpuidle trace."""
    with open(trace_path) as f:
        trace = json.load(f)
    kernels = {}
    for e in trace["traceEvents"]:
        if e.get("ph") == "X" and e.get("cat") == "kernel":
            kernels.setdefault(e["name"], []).append(float(e["dur"]))
    return kernels


def top_kernel_medians(before_trace, after_trace):
    """The kernel with most GPU time before: its median duration before and after (us)."""
    before, after = kernel_durations(before_trace), kernel_durations(after_trace)
    name = max(before, key=lambda k: sum(before[k]))
    return (statistics.median(before[name]),
            statistics.median(after[name]) if name in after else float("nan"))


def plain_ms(text):
    m = re.search(r"([0-9.]+) ms/step", text)
    return float(m.group(1)) if m else float("nan")


def main():
    out = sys.argv[1]
    cli = sys.argv[2] if len(sys.argv) > 2 else None
    only = os.environ.get("GAINS_ONLY", "").split()  # scenario names to run (all by default)
    os.makedirs(out, exist_ok=True)
    rows, failed = [], False
    for name, subcauses, steps in SCENARIOS:
        if only and name not in only:
            continue
        script = os.path.join(EXAMPLES, f"{name}.py")
        before = os.path.join(out, f"{name}.before.json")
        after = os.path.join(out, f"{name}.after.json")
        try:
            clocks = []
            run([sys.executable, script, "--gpuidle", before, "--steps", str(steps)],
                os.path.join(out, f"{name}.before.log"), clocks)
            with open(before) as f:
                b = json.load(f)
            advice = [a for a in b["advice"] if f"{a['cause']}.{a['subcause']}" in subcauses
                      or a["subcause"] in subcauses]
            predicted = sum(a["gain_per_step_ns"] or 0 for a in advice)
            fix_args = ["--fix"]
            workers = re.search(r"num_workers=(\d+)", " ".join(a["fix"] for a in advice))
            if workers:  # the worker count the advice names
                fix_args += ["--workers", workers.group(1)]
            run([sys.executable, script, "--gpuidle", after, "--steps", str(steps)] + fix_args,
                os.path.join(out, f"{name}.after.log"), clocks)
            with open(after) as f:
                a_report = json.load(f)
            plain_before = plain_ms(run([sys.executable, script, "--plain", "--steps", str(steps)],
                                        os.path.join(out, f"{name}.plain_before.log")))
            plain_after = plain_ms(run([sys.executable, script, "--plain", "--steps", str(steps)]
                                       + fix_args, os.path.join(out, f"{name}.plain_after.log")))
            if cli:
                with open(os.path.join(out, f"{name}.diff.txt"), "w") as f:
                    subprocess.run([cli, "diff", before, after], stdout=f,
                                   stderr=subprocess.STDOUT, timeout=120)
        except (RuntimeError, OSError, subprocess.TimeoutExpired, json.JSONDecodeError) as e:
            print(f"FAIL {name}: {e}")
            failed = True
            continue
        step_before, step_after = mean_step_ns(b), mean_step_ns(a_report)
        busy_before, busy_after = mean_busy_ns(b), mean_busy_ns(a_report)
        trace = lambda path: path.rsplit(".json", 1)[0] + ".trace.json"
        kernel_before, kernel_after = top_kernel_medians(trace(before), trace(after))
        measured = step_before - step_after
        error = (predicted - measured) / measured if measured > 0 else float("inf")
        ok = predicted > 0 and abs(error) <= TOLERANCE
        failed |= not ok
        fix_text = advice[0]["fix"] if advice else "(no advice)"
        rows.append((name, "+".join(s.split(".")[-1] for s in subcauses), step_before / 1e6,
                     predicted / 1e6, step_after / 1e6, measured / 1e6, error, plain_before,
                     plain_after, " ".join(fix_args), "pass" if ok else "FAIL", fix_text,
                     busy_before / 1e6, busy_after / 1e6, clocks, kernel_before,
                     kernel_after))
    lines = [
        "| scenario | advice for | step ms before | predicted gain ms/step | step ms after fix | "
        "measured gain ms/step | prediction error | GPU busy ms/step before -> after | "
        "top kernel median us before -> after | SM MHz, W before -> after | "
        "untraced ms/step before -> after | fix applied | check |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        (mhz0, w0), (mhz1, w1) = r[14]
        lines.append(f"| {r[0]} | {r[1]} | {r[2]:.2f} | {r[3]:.2f} | {r[4]:.2f} | {r[5]:.2f} | "
                     f"{r[6]:+.1%} | {r[12]:.2f} -> {r[13]:.2f} | {r[15]:.1f} -> {r[16]:.1f} | "
                     f"{mhz0:.0f}, {w0:.0f} -> "
                     f"{mhz1:.0f}, {w1:.0f} | {r[7]:.2f} -> {r[8]:.2f} | `{r[9]}` | {r[10]} |")
    lines.append("")
    for r in rows:
        lines.append(f"- {r[0]}: the advice said: {r[11]}")
    table = "\n".join(lines) + "\n"
    with open(os.path.join(out, "gains.md"), "w") as f:
        f.write(table)
    print(table)
    print("advice gains: " + ("FAIL" if failed else "all within +-20%"))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
