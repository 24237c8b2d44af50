"""gpuidle and torch.profiler in one process (issue 4): neither loses data silently.

Each case runs in a fresh process (the script runs itself):
A: torch.profiler runs (CUDA activities), then gpuidle.profile() starts inside it: gpuidle
   steps aside with one warning; torch.profiler's trace keeps its kernels.
B: gpuidle collects, then torch.profiler starts: gpuidle stops first with one warning (its
   report covers the work before), and torch.profiler records the work after.
C: (after B, same process) torch.profiler keeps CUPTI once it has run, so a new
   gpuidle.profile() says so and steps aside; torch.profiler, run again, still gets its kernels.
Prints one line per case; exit status 1 if a case fails.
"""
import json
import os
import subprocess
import sys
import tempfile


def work(torch, n=20):
    a = torch.randn(2048, 2048, device="cuda")
    for _ in range(n):
        a = torch.tanh(a @ a * 1e-3)
    torch.cuda.synchronize()


class TorchProfiler:
    """torch.profiler with CUDA activities; after the block, .kernels counts its kernels."""

    def __init__(self, torch):
        from torch.profiler import ProfilerActivity, profile

        self.prof = profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA])
        self.kernels = 0

    def __enter__(self):
        self.prof.__enter__()
        return self

    def __exit__(self, *exc):
        self.prof.__exit__(*exc)
        path = os.path.join(tempfile.mkdtemp(), "trace.json")
        self.prof.export_chrome_trace(path)
        with open(path) as f:
            events = json.load(f)["traceEvents"]
        self.kernels = sum(1 for e in events if e.get("cat") == "kernel")


def case(name):
    import torch

    import gpuidle

    work(torch, 2)
    if name == "A":
        with TorchProfiler(torch) as t:
            with gpuidle.profile(quiet=True) as p:
                work(torch)
        ok = (not p.active) and p.report is None and p.error is not None and t.kernels >= 20
        print(f"A torch.profiler first: gpuidle steps aside ({p.error!r}); torch.profiler kernels="
              f"{t.kernels}: {'ok' if ok else 'FAIL'}")
        return ok
    with gpuidle.profile(quiet=True) as p:
        work(torch)
        with TorchProfiler(torch) as t:
            work(torch)
    k = p.report.devices[0].kernel_count if p.report is not None and p.report.devices else 0
    ok_b = k >= 20 and t.kernels >= 20
    print(f"B gpuidle first: gpuidle kernels={k} (before torch.profiler), torch.profiler "
          f"kernels={t.kernels}: {'ok' if ok_b else 'FAIL'}")
    with gpuidle.profile(quiet=True) as p:
        work(torch)
    with TorchProfiler(torch) as t:
        work(torch)
    ok_c = (not p.active) and p.report is None and p.error is not None and t.kernels >= 20
    print(f"C after torch.profiler: gpuidle says {p.error!r}; torch.profiler again kernels="
          f"{t.kernels}: {'ok' if ok_c else 'FAIL'}")
    return ok_b and ok_c


def main():
    if len(sys.argv) > 1:
        return 0 if case(sys.argv[1]) else 1
    failed = False
    for name in ("A", "B"):
        proc = subprocess.run([sys.executable, __file__, name], capture_output=True, text=True)
        sys.stdout.write(proc.stdout)
        sys.stdout.write("".join(f"  {l}\n" for l in proc.stderr.splitlines() if "gpuidle" in l))
        failed |= proc.returncode != 0
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
