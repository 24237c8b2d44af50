"""Healthy: large bf16 matrix products back to back, no syncs inside the loop.

The host stays ahead of the GPU and the queue never drains. Expected: idle under 3%.
"""
import torch

from _profile_steps import parse_args, run_profiled


def make_step():
    """One step of large matrix products (tests/benchmarks/python uses it too)."""
    a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)

    def step():
        c = a
        for _ in range(8):
            c = c @ b
            c = c * 0.01

    return step


def main():
    args = parse_args(__doc__, "healthy_matmul.json.gz")  # first: --help needs no GPU
    run_profiled(make_step(), args)


if __name__ == "__main__":
    main()
