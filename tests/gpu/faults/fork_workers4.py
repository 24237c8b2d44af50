"""tests/gpu/fork_workers.py (the scenarios part's fork check) with 4 forked DataLoader workers,
for the fault matrix's fork row: the same training loop, only its DataLoader changed. Prints the
parent's pid last, so that the checker can tell its report from any other."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import fork_workers  # noqa: E402
from torch.utils.data import DataLoader  # noqa: E402


def four_forked_workers(*args, **kwargs):
    kwargs["num_workers"] = 4
    kwargs["multiprocessing_context"] = "fork"
    return DataLoader(*args, **kwargs)


if __name__ == "__main__":
    fork_workers.DataLoader = four_forked_workers
    fork_workers.main()
    print(f"fork_workers4: 4 forked workers, parent pid {os.getpid()}", flush=True)
