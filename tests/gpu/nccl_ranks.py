"""NCCL launches its own kernels: each rank of a torch.distributed job (torchrun, one GPU per
rank) runs all-reduces, so that `gpuidle run` shows whether NCCL's kernels come with their
launching calls, and writes one report per rank (--out report.%r.json). Rank 1 is late
before every all-reduce (a straggler), so rank 0's NCCL kernels mostly wait. Needs 2 GPUs."""
import os
import time

import torch
import torch.distributed as dist


def main():
    rank = int(os.environ["RANK"])
    torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", rank)))
    dist.init_process_group("nccl")
    x = torch.ones(1 << 22, device="cuda")
    for _ in range(40):
        y = x * 2.0
        if rank == 1:
            time.sleep(0.02)  # the straggler's extra host work
        dist.all_reduce(y)
    torch.cuda.synchronize()
    dist.destroy_process_group()
    print(f"nccl_ranks: rank {rank}: 40 all-reduces")


if __name__ == "__main__":
    main()
