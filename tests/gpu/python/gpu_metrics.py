#!/usr/bin/env python3
"""Issue 32 on the GPU machine: NVML's readings in live reports, another process on the same GPU
named with its pid, and what the readings cost (each configuration in its own process).

  PYTHONPATH=<package> tests/gpu/python/gpu_metrics.py OUT_DIR

1. healthy_matmul under gpuidle.profile(): the report's gpu_metrics (clocks, power, PCIe,
   memory), printed as read;
2. item_sync (idle a third of each step) while a second process runs a matmul loop on the same
   GPU: the report lists that process (its pid) and names it as running kernels during this
   job's idle readings;
3. healthy_matmul and item_sync, ROUNDS times each with the readings (default) and without
   (GPUIDLE_GPU_METRICS_MS=0), alternating: median ms/step of each.
Writes OUT_DIR/gpu_metrics.md. Exit status 1 if a check fails.
"""
import json
import os
import re
import subprocess
import sys

from proof_checks import check, cost_table, finish

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLES = os.path.normpath(os.path.join(HERE, "..", "..", "..", "examples", "python"))
ROUNDS = 2
STEPS = 30

OTHER_JOB = r"""
import sys, time, torch
a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
keep = torch.empty(int(2e9), dtype=torch.uint8, device="cuda")  # 2 GB held
print("ready", flush=True)
end = time.time() + float(sys.argv[1])
while time.time() < end:
    for _ in range(20):
        b = a @ a
    torch.cuda.synchronize()
"""

def live(script, out, name, env=None, steps=STEPS):
    report = os.path.join(out, f"{name}.json")
    p = subprocess.run([sys.executable, os.path.join(EXAMPLES, script), "--gpuidle", report,
                        "--steps", str(steps)], capture_output=True, text=True, timeout=300,
                       env={**os.environ, **(env or {})})
    with open(os.path.join(out, f"{name}.log"), "w") as f:
        f.write(p.stdout + p.stderr)
    if p.returncode != 0:
        raise RuntimeError(f"{script}: exit {p.returncode}\n{p.stderr[-2000:]}")
    ms = float(re.search(r"([0-9.]+) ms/step", p.stdout).group(1))
    with open(report) as f:
        return json.load(f), ms


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    lines = []

    # 1. The readings of a healthy loop.
    r, _ = live("healthy_matmul.py", out, "healthy", steps=300)  # 4 s: 40 readings
    m = r["devices"][0].get("gpu_metrics")
    check("healthy: gpu_metrics present", m is not None and m["samples"] > 0,
          json.dumps({k: v for k, v in (m or {}).items() if k not in ("findings",)}))
    if m:
        lines.append("healthy_matmul readings: " + ", ".join(
            f"{k} {m[k]}" for k in ("samples", "busy_samples", "period_ns", "sm_clock_median_mhz",
                                    "sm_clock_max_mhz", "slow_clock_share", "slow_clock_reason",
                                    "power_median_mw", "power_limit_mw", "temperature_max_c",
                                    "pcie_generation", "pcie_width", "pcie_generation_max",
                                    "pcie_width_max", "pcie_replays", "memory_used_max_bytes",
                                    "memory_total_bytes")))
        lines += [f"- finding ({f['kind']}): {f['what']}: {f['fix']}" for f in m["findings"]]

    # 2. Another process on the same GPU.
    other = subprocess.Popen([sys.executable, "-c", OTHER_JOB, "90"], stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, text=True)
    try:
        ready = other.stdout.readline().strip()
        r, _ = live("item_sync.py", out, "shared", steps=300)
    finally:
        other.terminate()
        other.wait(timeout=30)
    m = r["devices"][0].get("gpu_metrics") or {}
    pids = [p["pid"] for p in m.get("other_processes", [])]
    named = [f for f in m.get("findings", []) if f["kind"] == "other_process"]
    check("shared: the other process is listed with its pid",
          ready == "ready" and other.pid in pids, f"other pid {other.pid}; listed {pids}")
    check("shared: it is named as running kernels while this job idled",
          any(str(other.pid) in f["what"] for f in named), "; ".join(f["what"] for f in named))
    lost = r["verdict"]["lost_share"] if r.get("verdict") else float("nan")
    lines.append(f"item_sync beside pid {other.pid}: lost {lost:.1%} of the steady state; "
                 f"{m.get('samples')} readings, {m.get('idle_samples')} idle; "
                 f"other processes {m.get('other_processes')}")
    lines += [f"- finding ({f['kind']}): {f['what']}: {f['fix']}" for f in m.get("findings", [])]

    # 3. What the readings cost.
    times = {}
    for i in range(ROUNDS):
        for script in ("healthy_matmul.py", "item_sync.py"):
            for label, env in (("with", {}), ("without", {"GPUIDLE_GPU_METRICS_MS": "0"})):
                _, ms = live(script, out, f"cost_{i}", env)
                times.setdefault((script, label), []).append(ms)
    lines += cost_table(times, ("healthy_matmul.py", "item_sync.py"), "NVML readings")
    return finish(out, "gpu_metrics.md", "gpu metrics", lines)


if __name__ == "__main__":
    sys.exit(main())
