"""A DDP training job for the two-GPU proof (issue 17): `torchrun --nproc_per_node=2 ddp_job.py`.

Each rank trains the same MLP under DistributedDataParallel on batches from its own DataLoader
(num_workers=0: the loading runs in the training process). With --straggler, rank 1's input
pipeline is 30 ms slower per step, so the other rank's all-reduces wait for it; without it the
ranks arrive together and what is left is the exposed communication.

  plain:      torchrun ... ddp_job.py [--straggler]       (profile it with `gpuidle run`)
  in-process: torchrun ... ddp_job.py [--straggler] --profile DIR
              gpuidle.profile(out=DIR/report.rank%r.json, trace=..., merge_ranks=True) around
              the steps; rank 0 writes the job's report, gathered through torch.distributed,
              to DIR/job.json.
"""
import argparse
import os
import time

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, Dataset

STRAGGLER_DELAY_S = 0.030  # rank 1's extra input time per step


class Batches(Dataset):
    """Batches made on the host: `work_s` of preprocessing each (a busy loop, as decoding is)."""

    def __init__(self, work_s):
        self.work_s = work_s

    def __len__(self):
        return 1 << 20

    def __getitem__(self, i):
        deadline = time.perf_counter() + self.work_s
        while time.perf_counter() < deadline:
            pass
        return torch.randn(256, 1024), torch.randint(0, 10, (256,))


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--straggler", action="store_true", help="rank 1's input 30 ms slower")
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--profile", metavar="DIR", help="gpuidle.profile() in the process")
    args = parser.parse_args()

    rank = int(os.environ["RANK"])
    local = int(os.environ.get("LOCAL_RANK", rank))
    torch.cuda.set_device(local)
    dist.init_process_group("nccl")
    model = torch.nn.Sequential(torch.nn.Linear(1024, 4096), torch.nn.ReLU(),
                                torch.nn.Linear(4096, 4096), torch.nn.ReLU(),
                                torch.nn.Linear(4096, 10)).cuda()
    ddp = DistributedDataParallel(model, device_ids=[local])
    opt = torch.optim.SGD(ddp.parameters(), lr=1e-3)
    work = 0.002 + (STRAGGLER_DELAY_S if args.straggler and rank == 1 else 0.0)
    # One sample per batch: the dataset makes a whole batch, so its delay is per step.
    batches = iter(DataLoader(Batches(work), batch_size=None, num_workers=0))

    def step():
        x, y = next(batches)
        x, y = x.cuda(non_blocking=True), y.cuda(non_blocking=True)
        loss = torch.nn.functional.cross_entropy(ddp(x), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()  # DDP's all-reduces of the gradient buckets
        opt.step()

    for _ in range(3):  # warm-up: NCCL's communicators, cuBLAS, DDP's buckets
        step()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    if args.profile:
        import gpuidle

        os.makedirs(args.profile, exist_ok=True)
        with gpuidle.profile(out=os.path.join(args.profile, "report.rank%r.json"), format="json",
                             trace=os.path.join(args.profile, "trace.rank%r.trace.json"),
                             merge_ranks=True) as p:
            for _ in range(args.steps):
                with p.step():
                    step()
            torch.cuda.synchronize()
        if rank == 0 and dist.get_world_size() > 1:  # one rank has no job to merge
            if p.job_report is None:
                print("ddp_job: rank 0 got no job report")
            else:
                p.job_report.save(os.path.join(args.profile, "job.json"), overwrite=True)
    else:
        for _ in range(args.steps):
            step()
        torch.cuda.synchronize()
    elapsed = time.perf_counter() - t0
    print(f"ddp_job: rank {rank}: {args.steps} steps, {elapsed * 1e3 / args.steps:.2f} ms/step"
          f"{' (rank 1 straggles)' if args.straggler else ''}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
