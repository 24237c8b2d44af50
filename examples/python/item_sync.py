"""Sync-bound: a step of large kernels, then `.item()` and host work that uses the value.

`.item()` blocks the host until the GPU has drained; the few ms of host work after it (logging,
a data-dependent decision) then run while the GPU has nothing queued. Without the sync that work
would overlap the next step's GPU work. Expected: sync_bound.host_sync at the `.item()` line.
Fix (--fix): copy the value with non_blocking=True into pinned memory and use it a step later,
so the host work overlaps the next step's GPU work.
"""
import time

import torch

from _profile_steps import parse_args, run_profiled


def main():
    args = parse_args(__doc__, "item_sync.json.gz")
    a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16) * 0.01
    history = []
    # --fix: the value goes to pinned memory without a sync; the host work uses the previous
    # step's value, whose copy finished long before (the event is waited on after this step's
    # work is queued, so the GPU stays busy).
    pinned = torch.zeros(()).pin_memory()
    copied = torch.cuda.Event()
    state = {"pending": False}

    def step():
        c = a
        for _ in range(6):
            c = torch.tanh(c @ b)  # ~1.4 ms each on an H200
        loss = c.mean()
        if args.fix:
            value = 0.0
            if state["pending"]:
                copied.synchronize()  # the previous step's copy: done while this step queued
                value = pinned.item()  # a host tensor: no GPU sync
            pinned.copy_(loss, non_blocking=True)
            copied.record()
            state["pending"] = True
        else:
            value = loss.item()  # the host sync
        deadline = time.perf_counter() + 0.004  # 4 ms of host work that uses the value
        while time.perf_counter() < deadline:
            history.append(value * 0.5)
        del history[:]

    run_profiled(step, args)


if __name__ == "__main__":
    main()
