#!/usr/bin/env python3
"""Checks a gpuidle trace of one rank of tests/gpu/nccl_ranks.py: NCCL kernels are there, each
comes with the host call that launched it (joined by correlation id), and NCCL's own NVTX
ranges (domain "NCCL", captured through gpuidle's NVTX injection) are in the timeline.

  tests/gpu/check_nccl_trace.py TRACE.json[.gz]
Exit status 0 only if every NCCL kernel has its launching call and NCCL ranges were captured.
"""
import gzip
import json
import sys


def main():
    path = sys.argv[1]
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        events = json.load(f)["traceEvents"]
    calls = {}
    for e in events:
        if e.get("cat") in ("cuda_runtime", "cuda_driver"):
            calls[e.get("args", {}).get("correlation")] = e["name"]
    nccl = [e for e in events if e.get("cat") == "kernel" and "nccl" in e["name"].lower()]
    joined = [calls.get(e.get("args", {}).get("correlation")) for e in nccl]
    found = [c for c in joined if c]
    names = sorted(set(found))
    print(f"nccl kernels: {len(nccl)}, with their launching call: {len(found)} ({', '.join(names)})")
    ranges = [e for e in events
              if e.get("ph") == "X" and e.get("cat") not in ("kernel", "gpu_memcpy", "gpu_memset",
                                                            "cuda_runtime", "cuda_driver")
              and any(w in e["name"].lower() for w in ("nccl", "allreduce", "all_reduce"))]
    kinds = sorted({e["name"] for e in ranges})[:5]
    print(f"nccl nvtx ranges: {len(ranges)} ({', '.join(kinds)})")
    return 0 if nccl and len(found) == len(nccl) and ranges else 1


if __name__ == "__main__":
    sys.exit(main())
