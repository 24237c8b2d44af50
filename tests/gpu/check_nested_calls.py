"""A probe of CUPTI's callbacks (GPU machine): for a trace recorded with
GPUIDLE_BENCH_LEAVE_OUT=nested-call-skip, where gpuidle also timed the driver calls made inside
runtime calls, which call's correlation id the kernels carry: the runtime call's (cudaLaunchKernel)
or the driver call's inside it (cuLaunchKernel). Prints one line.

  python3 tests/gpu/check_nested_calls.py TRACE.json
"""
import collections
import json
import sys


def main(path):
    events = json.load(open(path))["traceEvents"]
    calls = [e for e in events if e.get("cat") in ("cuda_runtime", "cuda_driver")]
    kernels = {e["args"]["correlation"] for e in events if e.get("cat") == "kernel"}
    runtime = [c for c in calls if c["cat"] == "cuda_runtime"]
    driver = [c for c in calls if c["cat"] == "cuda_driver"]
    by_thread = collections.defaultdict(list)
    for c in runtime:
        by_thread[c["tid"]].append(c)
    nested = same = 0
    for d in driver:
        for r in by_thread[d["tid"]]:
            if r["ts"] <= d["ts"] and d["ts"] + d["dur"] <= r["ts"] + r["dur"]:
                nested += 1
                same += d["args"]["correlation"] == r["args"]["correlation"]
                break
    print(f"nested driver calls: {nested} of {len(driver)} driver calls; same correlation as "
          f"their runtime call: {same}; kernels matching a runtime call: "
          f"{sum(c['args']['correlation'] in kernels for c in runtime)} of {len(kernels)}, "
          f"a driver call: {sum(c['args']['correlation'] in kernels for c in driver)}; "
          f"driver names: {dict(collections.Counter(c['name'] for c in driver).most_common(4))}")


if __name__ == "__main__":
    main(sys.argv[1])
