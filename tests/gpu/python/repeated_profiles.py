"""Profiles one after another in one process, and the program's speed after them (collect/
collector.h CuptiAfterStop): every profile of a dozen records its kernels (no buffer is lost
between them), and once the last has stopped, a launch-bound loop runs about as fast as before
the first (CUPTI is detached) instead of keeping part of the tracing cost.

  python3 repeated_profiles.py            prints one line; exit status 1 if a profile was empty
  GPUIDLE_BENCH_LEAVE_OUT=detach python3 repeated_profiles.py     the same without detaching

The speed is reported, not judged (one process is noisy); the GPU script runs both lines.
"""
import os
import statistics
import sys
import time

import torch

import gpuidle

PROFILES = 12


def step(x):
    # 200 tiny kernels: what a launch costs decides the step's time.
    for _ in range(200):
        x = x * 1.0001
    torch.cuda.synchronize()
    return x


def median_step_ms(x, n=60):
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        x = step(x)
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1e3


def main():
    x = torch.ones(256, device="cuda")
    median_step_ms(x, 20)  # warm-up
    before = median_step_ms(x)
    kernels = []
    for _ in range(PROFILES):
        with gpuidle.profile(quiet=True) as p:
            for _ in range(5):
                x = step(x)
        kernels.append(sum(d.kernel_count for d in p.report.devices) if p.report else 0)
    after = median_step_ms(x)
    ok = len(kernels) == PROFILES and min(kernels) >= 5 * 200
    leave_out = os.environ.get("GPUIDLE_BENCH_LEAVE_OUT", "")
    print(f"repeated profiles{' (detach left out)' if leave_out else ''}: {PROFILES} profiles, "
          f"kernels each {min(kernels)}..{max(kernels)}: {'ok' if ok else 'FAIL'}; "
          f"step after the last stop / before the first: {after / before:.3f} "
          f"({after:.3f} ms / {before:.3f} ms)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
