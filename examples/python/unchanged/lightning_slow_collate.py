"""A Lightning `Trainer` whose DataLoader spends milliseconds of Python in its collate_fn.

A plain LightningModule (an MLP classifier, 1024 -> 2048 -> 2048 -> 10, Adam) trained for 150
steps on one GPU, no logger, no checkpoints, no progress bar. The DataLoader runs in the
training process (num_workers=0) and its collate function does ~30 ms of pure-Python work per
batch of 64 (a stand-in for tokenising, padding or augmenting by hand) before stacking the
samples. Nothing in it knows about gpuidle: profile it from outside,

    gpuidle run -- python3 lightning_slow_collate.py

The pathology: a training step needs well under a millisecond of GPU time, but the next batch
takes ~30 ms to collate, in the same thread that launches the GPU work. The GPU waits for input.
Lightning's own per-step Python (hooks, closures, the optimizer step) costs ~3.5 ms of launch
overhead per step on an H200, measured: with a 10 ms collate the steady state read 72%
data-starved and 24% launch-bound, a true mixture; 30 ms makes the input pipeline the one cause.

Expected: start-up (CUDA initialisation, Lightning's set-up, the first step) reported on its
own; the steady steps data-starved by the input pipeline (data_starved.dataloader >= 80% of the
steady-state idle time), the host stretches' Python frames in the collate function
(`slow_collate`). Fix: DataLoader(num_workers=N), move the per-batch work into the Dataset
(then into the workers) or onto the GPU.

Optional size: UNCHANGED_STEPS (default 100).
"""
import os
import time

import torch
from torch.utils.data import DataLoader, Dataset

try:
    import lightning.pytorch as pl
except ImportError:  # the standalone package
    import pytorch_lightning as pl

FEATURES = 1024
CLASSES = 10
BATCH = 64


class RandomSamples(Dataset):
    def __init__(self, n):
        g = torch.Generator().manual_seed(0)
        self.x = torch.randn(n, FEATURES, generator=g)
        self.y = torch.randint(0, CLASSES, (n,), generator=g)

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        return self.x[i], self.y[i]


def slow_collate(samples):
    """Per-batch Python work (~30 ms), then the default stacking."""
    deadline = time.perf_counter() + 0.030
    checksum = 0
    while time.perf_counter() < deadline:
        for k in range(64):
            checksum = (checksum * 31 + k) % 1000003
    xs = torch.stack([x for x, _ in samples])
    ys = torch.stack([y for _, y in samples])
    return xs, ys


class Classifier(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = torch.nn.Sequential(
            torch.nn.Linear(FEATURES, 2048), torch.nn.ReLU(),
            torch.nn.Linear(2048, 2048), torch.nn.ReLU(),
            torch.nn.Linear(2048, CLASSES))

    def training_step(self, batch, batch_idx):
        x, y = batch
        return torch.nn.functional.cross_entropy(self.net(x), y)

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=1e-3)


def main():
    steps = int(os.environ.get("UNCHANGED_STEPS", "100"))
    pl.seed_everything(0, verbose=False)
    loader = DataLoader(RandomSamples(steps * BATCH), batch_size=BATCH, shuffle=True,
                        num_workers=0, collate_fn=slow_collate)
    trainer = pl.Trainer(accelerator="gpu", devices=1, max_steps=steps, max_epochs=1,
                         logger=False, enable_checkpointing=False, enable_progress_bar=False,
                         enable_model_summary=False)
    t0 = time.perf_counter()
    trainer.fit(Classifier(), train_dataloaders=loader)
    wall = time.perf_counter() - t0
    print(f"lightning_slow_collate: {trainer.global_step} steps in {wall:.2f} s")


if __name__ == "__main__":
    main()
