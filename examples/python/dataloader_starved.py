"""Data-starved: a DataLoader with num_workers=0 over a CPU-heavy dataset.

Each batch costs ~40 ms of Python preprocessing in the training process itself, while the GPU
needs only a few ms per step: the GPU waits for input most of the time. (The recorded trace
tests/data/traces/torch/dataloader_starved.json.gz was made with ~20 ms per batch; its model
step's ~3 ms of launch overhead then held the data share just under 90%.)
Expected: data_starved.dataloader. Fix (--fix): the DataLoader that gpuidle's advice names,
num_workers=N (--workers N), pin_memory, persistent_workers, prefetch_factor.
"""
import sys
import time

import torch
from torch.utils.data import DataLoader, Dataset

from _profile_steps import parse_args, run_profiled


class SlowDataset(Dataset):
    def __len__(self):
        return 1 << 20

    def __getitem__(self, i):
        deadline = time.perf_counter() + 0.0012  # "decode and augment": 1.2 ms per sample
        x = 0.0
        while time.perf_counter() < deadline:
            x += 1.0
        return torch.full((1024,), float(i % 7)), i % 10


def main():
    workers = 0
    if "--workers" in sys.argv:  # --fix's worker count, as the advice names it
        i = sys.argv.index("--workers")
        workers = int(sys.argv[i + 1])
        del sys.argv[i:i + 2]
    args = parse_args(__doc__, "dataloader_starved.json.gz")
    model = torch.nn.Sequential(torch.nn.Linear(1024, 4096), torch.nn.ReLU(),
                                torch.nn.Linear(4096, 4096), torch.nn.ReLU(),
                                torch.nn.Linear(4096, 10)).cuda()
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    if args.fix:
        loader = DataLoader(SlowDataset(), batch_size=32, num_workers=workers or 8,
                            pin_memory=True, persistent_workers=True, prefetch_factor=2)
    else:
        loader = DataLoader(SlowDataset(), batch_size=32, num_workers=0)
    batches = iter(loader)

    def step():
        x, y = next(batches)
        x, y = x.cuda(non_blocking=True), y.cuda(non_blocking=True)
        loss = torch.nn.functional.cross_entropy(model(x), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()

    run_profiled(step, args)


if __name__ == "__main__":
    main()
