"""A small MLP trained with `torch.compile` (default mode): compiled, but still launch-bound.

A 4-layer MLP of width 256 (GELU), batch 64, compiled with `torch.compile(model)`, trained with
AdamW for 200 steps on 8 pre-made GPU batches. Nothing in it knows about gpuidle: profile it
from outside,

    gpuidle run -- python3 torch_compile_default.py

What happens: the first step traces the model (Dynamo), builds the forward and backward
graphs (AOTAutograd) and compiles them (Inductor generates Triton kernels, which Triton
compiles and loads): seconds of host work before the first optimizer step. In the steady steps
the compiled graphs run ~25 kernels of a few microseconds each (cuBLAS matmuls and fused
Triton kernels, plus the eager loss and AdamW's foreach kernels); issuing them from Python
(guards, the compiled graphs' wrappers, autograd, the optimizer) takes longer than running
them. Compilation fused the elementwise work but left one launch per kernel.

Expected: start-up reported on its own with compilation (Inductor/Triton) as its largest part;
the steady steps launch-bound (launch_bound >= 80% of the steady-state idle time). Fix: CUDA
graphs (mode="reduce-overhead", see torch_compile_reduce_overhead.py), bigger batches.

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
    compiled = torch.compile(model)
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
    print(f"torch_compile_default: {steps} steps in {wall:.2f} s (loss {loss.item():.4f})")


if __name__ == "__main__":
    main()
