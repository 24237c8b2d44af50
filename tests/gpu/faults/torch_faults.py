"""A PyTorch program that misbehaves on request, for the fault matrix (docs/RELIABILITY.md). It
never imports gpuidle unless told to (--profile): `gpuidle run` and LD_PRELOAD bring it in.

  torch_faults.py exit KIND [--profile]   200 kernels, then end by KIND: normal, sys_exit (3),
                                          os_exit (4), raise (1), sigterm (143), sigint (130);
                                          --profile: inside `with gpuidle.profile():`
  torch_faults.py coexist ORDER           torch.profiler (CUDA activities) and gpuidle in one
                                          process: gpuidle-first (torch.profiler starts after the
                                          program's first CUDA work) or profiler-first (before)
  torch_faults.py fork-exec               200 kernels, then a child Python (fork and exec) that
                                          does its own CUDA work

Each prints a last line that the checker (check_faults.py) reads.
"""
import contextlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import time

import torch

KERNELS = 200


def work(n=KERNELS):
    """n elementwise kernels on a small tensor, then a sync; returns its first value."""
    x = work.tensor
    for _ in range(n):
        x.add_(1)
    torch.cuda.synchronize()
    return float(x[0])


def fresh_tensor():
    work.tensor = torch.zeros(1 << 16, device="cuda")


def end(kind):
    if kind == "sys_exit":
        sys.exit(3)
    if kind == "os_exit":
        os._exit(4)
    if kind == "raise":
        raise RuntimeError("torch_faults: an exception nobody catches")
    if kind in ("sigterm", "sigint"):
        os.kill(os.getpid(), signal.SIGTERM if kind == "sigterm" else signal.SIGINT)
        time.sleep(30)
    if kind != "normal":
        raise SystemExit(f"unknown exit kind {kind}")


def exit_mode(kind, profile):
    scope = contextlib.nullcontext()
    if profile:
        import gpuidle

        scope = gpuidle.profile()  # GPUIDLE_OUT, GPUIDLE_FORMAT from the environment
    with scope:
        fresh_tensor()
        value = work()
        print(f"torch_faults exit {kind}: {KERNELS} kernels, value {value:.0f}", flush=True)
        end(kind)


def torch_profiler_kernels(run):
    """Runs run() inside torch.profiler (CPU and CUDA); the kernels its trace holds."""
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        run()
    path = os.path.join(tempfile.mkdtemp(), "trace.json")
    prof.export_chrome_trace(path)
    with open(path) as f:
        events = json.load(f).get("traceEvents", [])
    return sum(1 for e in events if e.get("cat") == "kernel")


def coexist(order):
    # Three phases of KERNELS kernels each; the middle one inside torch.profiler.
    if order == "gpuidle-first":
        fresh_tensor()
        work()  # CUDA starts here: the injected collection takes CUPTI first
        seen = torch_profiler_kernels(work)
    elif order == "profiler-first":
        seen = torch_profiler_kernels(lambda: (fresh_tensor(), work()))  # CUDA starts inside
    else:
        raise SystemExit(f"unknown order {order}")
    value = work()
    print(f"torch_faults coexist {order}: torch.profiler kernels {seen} of at least {KERNELS}, "
          f"value {value:.0f}", flush=True)


def fork_exec():
    fresh_tensor()
    value = work()
    child = subprocess.run([sys.executable, os.path.abspath(__file__), "exit", "normal"])
    print(f"torch_faults fork-exec: parent pid {os.getpid()}, child exited with "
          f"{child.returncode}, value {value:.0f}", flush=True)
    return 0 if child.returncode == 0 else 1


def main():
    args = sys.argv[1:]
    if len(args) >= 2 and args[0] == "exit":
        return exit_mode(args[1], "--profile" in args[2:])
    if len(args) == 2 and args[0] == "coexist":
        return coexist(args[1])
    if args == ["fork-exec"]:
        return fork_exec()
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
