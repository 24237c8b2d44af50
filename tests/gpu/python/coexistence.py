"""gpuidle and torch.profiler in one process (issue 4): neither loses data silently.

A: torch.profiler runs (CUDA activities), then gpuidle.profile() starts inside it: gpuidle
   steps aside with one warning; torch.profiler's trace keeps its kernels.
B: gpuidle collects, then torch.profiler starts: gpuidle stops first with one warning (its
   report covers the steps before), torch.profiler records the steps after.
C: afterwards a new gpuidle.profile() collects again.
Prints one line per case; exit status 1 if a case fails.
"""
import json
import os
import sys
import tempfile

import torch
from torch.profiler import ProfilerActivity, profile

import gpuidle


def work(n=20):
    a = torch.randn(2048, 2048, device="cuda")
    for _ in range(n):
        a = torch.tanh(a @ a * 1e-3)
    torch.cuda.synchronize()


def kernels_in(prof, folder, name):
    path = os.path.join(folder, name)
    prof.export_chrome_trace(path)
    with open(path) as f:
        events = json.load(f)["traceEvents"]
    return sum(1 for e in events if e.get("cat") == "kernel")


def main():
    folder = tempfile.mkdtemp()
    work(2)
    failed = False

    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        with gpuidle.profile(quiet=True) as p:
            work()
    n = kernels_in(prof, folder, "a.json")
    ok = (not p.active) and p.report is None and p.error is not None and n >= 20
    failed |= not ok
    print(f"A torch.profiler first: gpuidle active={p.active} error={p.error!r}; "
          f"torch.profiler kernels={n}: {'ok' if ok else 'FAIL'}")

    with gpuidle.profile(quiet=True) as p:
        work()
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
            work()
    n = kernels_in(prof, folder, "b.json")
    k = p.report.devices[0].kernel_count if p.report is not None and p.report.devices else 0
    ok = p.report is not None and k >= 20 and n >= 20
    failed |= not ok
    print(f"B gpuidle first: gpuidle kernels={k} (steps before torch.profiler), "
          f"torch.profiler kernels={n}: {'ok' if ok else 'FAIL'}")

    with gpuidle.profile(quiet=True) as p:
        work()
    k = p.report.devices[0].kernel_count if p.report is not None and p.report.devices else 0
    ok = k >= 20
    failed |= not ok
    print(f"C gpuidle again afterwards: kernels={k}: {'ok' if ok else 'FAIL'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
