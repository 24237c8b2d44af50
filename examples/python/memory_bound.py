"""Memory-bound: elementwise operations on large tensors back to back, no syncs in the loop.

The GPU is busy nearly all the time, but each kernel streams its tensors through DRAM and the
compute units wait on memory: faster clocks or fewer gaps would not help. Expected: idle under
3%; with GPU throughput sampled (a live gpuidle capture), DRAM near its peak while busy, the
tensor pipes idle, and the finding "memory-bound".
"""
import torch

from _profile_steps import parse_args, run_profiled


def make_step():
    """One step of elementwise passes over 256 MB of float32."""
    x = torch.randn(64 * 2**20, device="cuda")
    y = torch.empty_like(x)

    def step():
        for _ in range(8):
            torch.mul(x, 1.0001, out=y)
            torch.add(y, 0.5, out=x)

    return step


def main():
    args = parse_args(__doc__, "memory_bound.json.gz")  # first: --help needs no GPU
    run_profiled(make_step(), args)


if __name__ == "__main__":
    main()
