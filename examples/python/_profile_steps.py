"""Shared by the scenario scripts: run a training step under torch.profiler and save the trace,
or under gpuidle.profile().

Each scenario in this folder creates one cause of GPU idle time on purpose, so that the right
answer is known. Run one directly to see it (`python3 tiny_mlp_launch_bound.py --out t.json.gz`),
then `gpuidle analyze t.json.gz`; or let gpuidle profile it live
(`python3 tiny_mlp_launch_bound.py --gpuidle report.json`).
"""
import argparse
import time

import torch
from torch.profiler import ProfilerActivity, profile, schedule


def parse_args(description, default_out):
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--out", default=default_out, help="trace file (.json or .json.gz)")
    parser.add_argument("--steps", type=int, default=12, help="profiled steps")
    parser.add_argument("--with-stack", action="store_true", help="record Python call stacks")
    parser.add_argument("--plain", action="store_true",
                        help="run the steps without torch.profiler (to profile the script with "
                             "`gpuidle run -- python3 ...` instead)")
    parser.add_argument("--fix", action="store_true",
                        help="apply the fix that gpuidle advises for this scenario (the "
                             "prediction of its gain is checked against it on the GPU: "
                             "tests/gpu/python/advice_gains.py)")
    parser.add_argument("--gpuidle", metavar="REPORT",
                        help="profile the steps with gpuidle.profile() instead of torch.profiler "
                             "and write its report (JSON) there, its trace beside it")
    return parser.parse_args()


def run_profiled(step, args, warmup_steps=3):
    """Runs `step()` warmup_steps times untraced, then args.steps times under torch.profiler."""
    for _ in range(warmup_steps):
        step()
    torch.cuda.synchronize()
    if args.gpuidle:
        import gpuidle

        trace = args.gpuidle.rsplit(".json", 1)[0] + ".trace.json"
        t0 = time.perf_counter()
        # One warm-up step left out of the report, as torch.profiler's schedule does below.
        with gpuidle.profile(out=args.gpuidle, format="json", trace=trace, skip_steps=1) as p:
            for _ in range(args.steps + 1):
                with p.step():  # one row per step in the report
                    step()
            torch.cuda.synchronize()
        elapsed = time.perf_counter() - t0
        print(f"{args.gpuidle}: {args.steps} profiled steps under gpuidle.profile(), "
              f"{elapsed * 1e3 / (args.steps + 1):.2f} ms/step")
        return
    if args.plain:
        t0 = time.perf_counter()
        for _ in range(args.steps + 1):
            step()
        torch.cuda.synchronize()
        elapsed = time.perf_counter() - t0
        print(f"{args.steps + 1} steps without torch.profiler, "
              f"{elapsed * 1e3 / (args.steps + 1):.2f} ms/step")
        return
    sched = schedule(wait=0, warmup=1, active=args.steps, repeat=1)
    t0 = time.perf_counter()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], schedule=sched,
                 with_stack=args.with_stack) as prof:
        for _ in range(args.steps + 1):
            step()
            prof.step()
    torch.cuda.synchronize()
    elapsed = time.perf_counter() - t0
    prof.export_chrome_trace(args.out)
    print(f"{args.out}: {args.steps} profiled steps, {elapsed * 1e3 / (args.steps + 1):.2f} ms/step")
