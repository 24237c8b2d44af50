"""What profiling costs a PyTorch training loop: untraced steps, then the same steps under a
profiler, in one process (run_torch_overhead.sh runs the processes interleaved).

  python3 torch_overhead.py --loop tiny_mlp --profiler gpuidle|torch|bare --steps 60

gpuidle-nosites and gpuidle-nohooks are diagnostics: gpuidle without the Python call sites, or
without its PyTorch integration (the DataLoader and sync-point wrappers), to price each part.

bare is the floor: libgpuidle_bare_cupti.so (tests/benchmarks/overhead), CUPTI recording
kernels only, switched on and off through ctypes (GPUIDLE_BARE_CUPTI names the library).

tiny_mlp: examples/python/tiny_mlp_launch_bound.py's step (a 12-layer 64-wide MLP with Adam,
batch 8: hundreds of tiny kernels, so a profiler's per-launch cost shows in full).
healthy: examples/python/healthy_matmul.py's step (large bf16 matmuls: the GPU is the bottleneck).
Each step ends with torch.cuda.synchronize() so that a step's time is its own. Prints
  result loop=tiny_mlp profiler=gpuidle steps=60 untraced_ms=... traced_ms=... ratio=...
(medians of the step times of each phase; ratio = traced / untraced), and for gpuidle the share
of idle time it called launch_bound (a collection that lost the launch calls would show).

  python3 torch_overhead.py --loop tiny_mlp --alternate 6 --steps 30

runs bare and gpuidle in turn in one process instead: each cycle times untraced steps, one
profiler's steps, untraced steps, the other's (the order swaps every cycle); each profiler
detaches CUPTI after its turn (gpuidle when its profile stops; bare through
gpuidle_bare_cupti_detach), and its first step after a start is left out. Prints a line per
cycle, then
  result loop=tiny_mlp alternate=6 steps=30 untraced_ms=... bare_ratio=... gpuidle_ratio=...
(medians over the cycles of each turn's traced / untraced ratio), so that the comparison with
the floor does not depend on which process landed where.
"""
import argparse
import ctypes
import os
import statistics
import sys
import time

import torch


def make_step(loop):
    # The loops of the scenario scripts, so that the benchmark measures what they show.
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..",
                                    "examples", "python"))
    module = __import__("tiny_mlp_launch_bound" if loop == "tiny_mlp" else "healthy_matmul")
    return module.make_step()


def timed(step, n, after_step=None):
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        step()
        torch.cuda.synchronize()
        times.append(time.perf_counter() - t0)
        if after_step is not None:
            after_step()
    return statistics.median(times) * 1e3


def bare_library():
    bare = ctypes.CDLL(os.environ.get("GPUIDLE_BARE_CUPTI", "libgpuidle_bare_cupti.so"))
    bare.gpuidle_bare_cupti_kernel_records.restype = ctypes.c_longlong
    return bare


def alternate(step, cycles, steps):
    """bare and gpuidle in turn in this process; returns the result line's fields."""
    import gpuidle

    bare = bare_library()

    def bare_turn():
        if bare.gpuidle_bare_cupti_start() != 1:
            raise SystemExit("the bare CUPTI collector did not start")
        timed(step, 1)  # CUPTI's first calls after attaching are slow
        traced = timed(step, steps)
        if bare.gpuidle_bare_cupti_stop() != 1 or bare.gpuidle_bare_cupti_detach() != 1:
            raise SystemExit("the bare CUPTI collector did not stop and detach")
        return traced

    def gpuidle_turn():
        with gpuidle.profile(quiet=True) as p:
            timed(step, 1, p.step)
            traced = timed(step, steps, p.step)
        if p.report is None:
            raise SystemExit("gpuidle did not collect")
        return traced

    untraced, ratios = [], {"bare": [], "gpuidle": []}
    for cycle in range(cycles):
        order = [("bare", bare_turn), ("gpuidle", gpuidle_turn)]
        if cycle % 2:
            order.reverse()
        for name, turn in order:
            before = timed(step, steps)
            untraced.append(before)
            ratios[name].append(turn() / before)
        print(f"cycle {cycle}: bare_ratio={ratios['bare'][-1]:.4f} "
              f"gpuidle_ratio={ratios['gpuidle'][-1]:.4f}", flush=True)
    return (f"alternate={cycles} steps={steps} untraced_ms={statistics.median(untraced):.4f} "
            f"bare_ratio={statistics.median(ratios['bare']):.4f} "
            f"gpuidle_ratio={statistics.median(ratios['gpuidle']):.4f} "
            f"kernel_records={bare.gpuidle_bare_cupti_kernel_records()}")


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--loop", choices=["tiny_mlp", "healthy"], default="tiny_mlp")
    parser.add_argument("--profiler",
                        choices=["gpuidle", "gpuidle-nosites", "gpuidle-nohooks", "torch", "bare"])
    parser.add_argument("--steps", type=int, default=60)
    parser.add_argument("--alternate", type=int, default=0, metavar="CYCLES",
                        help="bare and gpuidle in turn in this process (no --profiler)")
    args = parser.parse_args()
    if (args.profiler is None) == (args.alternate == 0):
        parser.error("give --profiler or --alternate")
    step = make_step(args.loop)
    timed(step, 20)  # warm-up: allocator, cuBLAS handles, autotuning
    if args.alternate:
        print(f"result loop={args.loop} {alternate(step, args.alternate, args.steps)}")
        return 0
    untraced = timed(step, args.steps)
    extra = ""
    if args.profiler.startswith("gpuidle"):
        import gpuidle
        from gpuidle import _call_sites, _profile

        if args.profiler == "gpuidle-nosites":
            _call_sites.enable = lambda: None
        if args.profiler == "gpuidle-nohooks":
            _profile.Profile._install_torch = lambda self: None

        with gpuidle.profile(quiet=True) as p:
            traced = timed(step, args.steps, p.step)
        if p.report is None:
            print("gpuidle did not collect", file=sys.stderr)
            return 1
        idle = sum(d.idle_ns for d in p.report.devices)
        launch = sum(d.idle_by_cause.get("launch_bound", 0) for d in p.report.devices)
        extra = f" launch_bound_pct={100 * launch / idle if idle else 0:.1f}"
    elif args.profiler == "bare":
        bare = bare_library()
        if bare.gpuidle_bare_cupti_start() != 1:
            print("the bare CUPTI collector did not start", file=sys.stderr)
            return 1
        traced = timed(step, args.steps)
        bare.gpuidle_bare_cupti_stop()
        extra = f" kernel_records={bare.gpuidle_bare_cupti_kernel_records()}"
    else:
        from torch.profiler import ProfilerActivity, profile

        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
            traced = timed(step, args.steps, prof.step)
    print(f"result loop={args.loop} profiler={args.profiler} steps={args.steps} "
          f"untraced_ms={untraced:.4f} traced_ms={traced:.4f} ratio={traced / untraced:.4f}{extra}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
