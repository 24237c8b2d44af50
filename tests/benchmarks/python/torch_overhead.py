"""What profiling costs a PyTorch training loop: untraced steps, then the same steps under a
profiler, in one process (run_torch_overhead.sh runs the processes interleaved).

  python3 torch_overhead.py --loop tiny_mlp --profiler gpuidle|torch --steps 60

tiny_mlp: a 12-layer 64-wide MLP with Adam, batch 8: hundreds of tiny kernels per step, so the
host's cost per launch is the step time, and a profiler's per-launch cost shows in full.
healthy: eight 8192x8192 bf16 matmuls per step: the GPU is the bottleneck.
Each step ends with torch.cuda.synchronize() so that a step's time is its own. Prints
  result loop=tiny_mlp profiler=gpuidle steps=60 untraced_ms=... traced_ms=... ratio=...
(medians of the step times of each phase; ratio = traced / untraced).
"""
import argparse
import statistics
import sys
import time

import torch


def tiny_mlp():
    layers = []
    for _ in range(12):
        layers += [torch.nn.Linear(64, 64), torch.nn.ReLU()]
    model = torch.nn.Sequential(*layers).cuda()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3, foreach=False)
    x = torch.randn(8, 64, device="cuda")
    y = torch.randn(8, 64, device="cuda")

    def step():
        loss = torch.nn.functional.mse_loss(model(x), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()

    return step


def healthy():
    a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)

    def step():
        c = a
        for _ in range(8):
            c = (c @ b) * 0.01

    return step


def timed(step, n, after_step=None):
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        step()
        torch.cuda.synchronize()
        times.append(time.perf_counter() - t0)
        if after_step is not None:
            after_step()
    return statistics.median(times) * 1e3


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--loop", choices=["tiny_mlp", "healthy"], default="tiny_mlp")
    parser.add_argument("--profiler", choices=["gpuidle", "torch"], required=True)
    parser.add_argument("--steps", type=int, default=60)
    args = parser.parse_args()
    step = tiny_mlp() if args.loop == "tiny_mlp" else healthy()
    timed(step, 20)  # warm-up: allocator, cuBLAS handles, autotuning
    untraced = timed(step, args.steps)
    if args.profiler == "gpuidle":
        import gpuidle

        with gpuidle.profile(quiet=True) as p:
            traced = timed(step, args.steps, p.step)
        if p.report is None:
            print("gpuidle did not collect", file=sys.stderr)
            return 1
    else:
        from torch.profiler import ProfilerActivity, profile

        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
            traced = timed(step, args.steps, prof.step)
    print(f"result loop={args.loop} profiler={args.profiler} steps={args.steps} "
          f"untraced_ms={untraced:.4f} traced_ms={traced:.4f} ratio={traced / untraced:.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
