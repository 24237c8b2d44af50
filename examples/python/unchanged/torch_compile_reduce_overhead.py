"""The same MLP as torch_compile_default.py, compiled with mode="reduce-overhead" (CUDA graphs).

A 4-layer MLP of width 256 (GELU), batch 64, `torch.compile(model, mode="reduce-overhead")`,
trained with AdamW for 200 steps on 8 pre-made GPU batches. Nothing in it knows about gpuidle:
profile it from outside,

    gpuidle run -- python3 torch_compile_reduce_overhead.py

What happens: as in default mode, the first step compiles the forward and backward graphs
(Dynamo, AOTAutograd, Inductor, Triton); then CUDA-graph trees run one warm-up step eagerly,
record each graph once and from then on replay it: one cudaGraphLaunch issues all of a graph's
kernels. The per-kernel launch cost of default mode is gone. What is left between kernels in
the steady steps: the GPU's own dispatch latency between the kernels of a replayed graph (work
already queued: launch_bound.kernel_gap), and the host work between replays (the graph trees'
bookkeeping and input copies, the eager loss, autograd, AdamW's foreach kernels: short
stretches between launch calls, launch_bound.launch_overhead). Both are launch-bound; there is
no sync and no input wait in the loop.

Expected: start-up reported on its own with compilation as its largest part (the warm-up and
recording steps after it are start-up too, or steady-state one-off time); the steady steps
launch-bound (launch_bound >= 80% of the steady-state idle time, kernel_gap and
launch_overhead both present), and a smaller share of the steady window idle than
torch_compile_default.py's (same model, same steps). What remains is the model's size: a bigger
batch per step would fill the GPU.

Optional size: UNCHANGED_STEPS (default 200).
"""
import os
import time

import torch

WIDTH = 256
BATCH = 64


def make_model():
    layers = []
    for _ in range(4):
        layers += [torch.nn.Linear(WIDTH, WIDTH), torch.nn.GELU()]
    return torch.nn.Sequential(*layers[:-1]).cuda()


def main():
    steps = int(os.environ.get("UNCHANGED_STEPS", "200"))
    torch.manual_seed(0)
    model = make_model()
    compiled = torch.compile(model, mode="reduce-overhead")
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    batches = [(torch.randn(BATCH, WIDTH, device="cuda"), torch.randn(BATCH, WIDTH, device="cuda"))
               for _ in range(8)]
    t0 = time.perf_counter()
    for i in range(steps):
        x, y = batches[i % len(batches)]
        loss = torch.nn.functional.mse_loss(compiled(x), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
    torch.cuda.synchronize()
    wall = time.perf_counter() - t0
    print(f"torch_compile_reduce_overhead: {steps} steps in {wall:.2f} s "
          f"(loss {loss.item():.4f})")


if __name__ == "__main__":
    main()
