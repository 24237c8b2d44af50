"""An MLP training loop that calls `torch.cuda.empty_cache()` after every step.

A habit seen in real training scripts ("free memory between steps"): 6 linear layers of width
1024 with ReLU, batch 4096, fp32, SGD, 150 steps on 4 pre-made GPU batches, and
`torch.cuda.empty_cache()` after each `optimizer.step()`. Nothing in it knows about gpuidle:
profile it from outside,

    gpuidle run -- python3 empty_cache_every_step.py
    PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True gpuidle run -- python3 empty_cache_every_step.py

The pathology: empty_cache() hands every cached block back to the driver (cudaFree, which
first waits for the device to finish its work), so the next step's activations and gradients
are allocated again from the driver (cudaMalloc) instead of from PyTorch's cache. The GPU idles
while the host is inside the allocator. With expandable_segments the cache is virtual memory
mapped in pages: empty_cache() unmaps and releases them (cuMemUnmap, cuMemRelease) and the next
step maps new ones (cuMemCreate, cuMemMap, cuMemSetAccess) — other calls, the same habit.

Expected: the steady steps' idle time mostly sync_bound.allocator, with the allocator calls as
the evidence and the advice to stop emptying the cache; with that fix (delete the call) the
step gets faster by about what the report predicted.

Optional size: UNCHANGED_STEPS (default 150). UNCHANGED_EMPTY_CACHE=0 runs the same loop
without the call (the fix, for the predicted gain).
"""
import os
import time

import torch

WIDTH = 1024
BATCH = 4096


def main():
    steps = int(os.environ.get("UNCHANGED_STEPS", "150"))
    empty = os.environ.get("UNCHANGED_EMPTY_CACHE", "1") != "0"
    torch.manual_seed(0)
    layers = []
    for _ in range(6):
        layers += [torch.nn.Linear(WIDTH, WIDTH), torch.nn.ReLU()]
    model = torch.nn.Sequential(*layers[:-1]).cuda()
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    batches = [(torch.randn(BATCH, WIDTH, device="cuda"), torch.randn(BATCH, WIDTH, device="cuda"))
               for _ in range(4)]
    t0 = time.perf_counter()
    for i in range(steps):
        x, y = batches[i % len(batches)]
        loss = torch.nn.functional.mse_loss(model(x), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if empty:
            torch.cuda.empty_cache()
    torch.cuda.synchronize()
    wall = time.perf_counter() - t0
    print(f"empty_cache_every_step: {steps} steps in {wall:.2f} s (loss {loss.item():.4f}, "
          f"empty_cache={'on' if empty else 'off'}, "
          f"PYTORCH_CUDA_ALLOC_CONF={os.environ.get('PYTORCH_CUDA_ALLOC_CONF', '')!r})")


if __name__ == "__main__":
    main()
