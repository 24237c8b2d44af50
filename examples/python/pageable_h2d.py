"""Data-starved on the copy: big input batches copied from pageable host memory each step.

A 256 MiB batch in ordinary (pageable) memory is staged through a driver buffer; the copy runs
far below PCIe/NVLink speed and the GPU computes nothing meanwhile.
Expected: data_starved.h2d_copy. Fix (--fix, as gpuidle advises): pinned memory and
.cuda(non_blocking=True).
"""
import torch

from _profile_steps import parse_args, run_profiled


def main():
    args = parse_args(__doc__, "pageable_h2d.json.gz")
    host_batch = torch.randn(64, 1024, 1024)  # 256 MiB, pageable
    if args.fix:  # the advised fix: pinned memory, copied with non_blocking=True
        host_batch = host_batch.pin_memory()
    w = torch.randn(1024, 1024, device="cuda")

    def step():
        x = host_batch.cuda(non_blocking=args.fix)
        y = x @ w
        y.relu_()

    run_profiled(step, args)


if __name__ == "__main__":
    main()
