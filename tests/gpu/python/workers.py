"""Children never collect (issue 4): a profile around DataLoaders whose workers are forked and
spawned, and a torch.multiprocessing child doing CUDA work, writes exactly one report: the
parent's. Prints one line; exit status 1 otherwise.

  python3 workers.py OUT_DIR
"""
import os
import sys

import torch
import torch.multiprocessing as mp
from torch.utils.data import DataLoader, Dataset

import gpuidle


class Numbers(Dataset):
    def __len__(self):
        return 64

    def __getitem__(self, i):
        return torch.full((256,), float(i))


def child(_):
    x = torch.ones(1024, device="cuda")
    torch.cuda.synchronize()
    assert float(x.sum()) == 1024.0


def main():
    folder = sys.argv[1]
    os.makedirs(folder, exist_ok=True)
    with gpuidle.profile(out=os.path.join(folder, "report.%p.json"), format="json", quiet=True) as p:
        for context in ("fork", "spawn"):
            for batch in DataLoader(Numbers(), batch_size=8, num_workers=2,
                                    multiprocessing_context=context):
                batch.cuda().sum().item()
        mp.spawn(child, nprocs=1)
    files = sorted(os.listdir(folder))
    ok = p.report is not None and files == [f"report.{os.getpid()}.json"]
    print(f"workers: forked and spawned DataLoader workers and a torch.multiprocessing child; "
          f"report files: {files} (parent {os.getpid()}): {'ok' if ok else 'FAIL'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
