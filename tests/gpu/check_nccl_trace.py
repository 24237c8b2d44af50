#!/usr/bin/env python3
"""Checks a gpuidle trace of tests/gpu/nccl_single_rank.py: NCCL kernels are there and each
comes with the host call that launched it (joined by correlation id).

  tests/gpu/check_nccl_trace.py TRACE.json
"""
import json
import sys


def main():
    events = json.load(open(sys.argv[1]))["traceEvents"]
    calls = {}
    for e in events:
        if e.get("cat") in ("cuda_runtime", "cuda_driver"):
            calls[e.get("args", {}).get("correlation")] = e["name"]
    nccl = [e for e in events if e.get("cat") == "kernel" and "nccl" in e["name"].lower()]
    joined = [calls.get(e.get("args", {}).get("correlation")) for e in nccl]
    found = [c for c in joined if c]
    names = sorted(set(found))
    print(f"nccl kernels: {len(nccl)}, with their launching call: {len(found)} ({', '.join(names)})")
    return 0 if nccl and len(found) == len(nccl) else 1


if __name__ == "__main__":
    sys.exit(main())
