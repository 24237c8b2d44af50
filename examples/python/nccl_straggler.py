"""Multi-GPU: two ranks all-reduce gradients every step; rank 1 is a straggler.

Run with `torchrun --nproc_per_node=2 nccl_straggler.py --out straggler.json.gz`; each rank
writes its own trace (straggler.rank0.json.gz, ...). Rank 1 spends 30 ms of unmarked host work
before each all-reduce, so rank 0's NCCL kernels spin waiting for it. Expected: rank 0 shows
long communication with most of it comm_wait; rank 1 is idle for that host work
(data_starved.host). Fix: balance the ranks, find the straggler's slow host work.
"""
import os
import time

import torch
import torch.distributed as dist

from _profile_steps import parse_args, run_profiled


def main():
    args = parse_args(__doc__, "nccl_straggler.json.gz")
    dist.init_process_group("nccl")
    rank = dist.get_rank()
    torch.cuda.set_device(rank)
    a = torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16)
    grad = torch.randn(16 << 20, device="cuda")  # 64 MiB of "gradients"

    def step():
        c = a
        for _ in range(4):
            c = c @ a * 0.01
        grad.add_(c.float().mean())
        if rank == 1:
            deadline = time.perf_counter() + 0.030  # the straggler's slow host work
            while time.perf_counter() < deadline:
                pass
        dist.all_reduce(grad)

    stem = args.out[:-8] if args.out.endswith(".json.gz") else args.out.rsplit(".json", 1)[0]
    args.out = f"{stem}.rank{rank}.json.gz"
    run_profiled(step, args)
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    os.environ.setdefault("NCCL_NVLS_ENABLE", "0")
    main()
