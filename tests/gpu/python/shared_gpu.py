#!/usr/bin/env python3
"""Issue 32 on the GPU machine: a job's queued work waiting while another process holds the GPU.

  PYTHONPATH=<package> tests/gpu/python/shared_gpu.py OUT_DIR GPUIDLE_CLI

healthy_matmul (a deep queue of large bf16 matrix products, no syncs), unchanged, alone and then
beside a second process running its own matmul loop on the same GPU; each untraced (--plain:
ms/step) and under gpuidle.profile() (report + trace):
1. alone, the report names no other process and nothing is sync_bound.other_process;
2. shared, the new idle time is sync_bound.other_process, not launch-bound or unattributed; the
   advice for it and the other_process finding name the other process's pid;
3. the report's idle per step against the untraced truth of the same conditions (untraced
   ms/step minus the report's busy time per step);
4. `gpuidle analyze` of the shared run's trace gives the same attribution (the trace carries
   NVML's processes), so CI can replay it.
Writes OUT_DIR/shared_gpu.md and keeps the reports and the shared trace (gzip) for replay.
Exit status 1 if a check fails.
"""
import gzip
import json
import os
import re
import shutil
import subprocess
import sys

from proof_checks import check, finish

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLES = os.path.normpath(os.path.join(HERE, "..", "..", "..", "examples", "python"))
STEPS = 300
OTHER = "sync_bound.other_process"

# The other job: its own matmul loop, 2 GB held, until killed.
OTHER_JOB = r"""
import torch
a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
keep = torch.empty(int(2e9), dtype=torch.uint8, device="cuda")
for _ in range(3):
    b = a @ a
torch.cuda.synchronize()
print("ready", flush=True)
while True:
    for _ in range(20):
        b = a @ a
    torch.cuda.synchronize()
"""

def run(out, name, args):
    p = subprocess.run([sys.executable, os.path.join(EXAMPLES, "healthy_matmul.py"), *args,
                        "--steps", str(STEPS)], capture_output=True, text=True, timeout=240)
    with open(os.path.join(out, f"{name}.log"), "w") as f:
        f.write(p.stdout + p.stderr)
    if p.returncode != 0:
        raise RuntimeError(f"{name}: exit {p.returncode}\n{p.stderr[-2000:]}")
    return float(re.search(r"([0-9.]+) ms/step", p.stdout).group(1))


def measure(out, name):
    """Untraced ms/step, then the profiled report (its trace beside it)."""
    untraced = run(out, f"{name}.plain", ["--plain"])
    report = os.path.join(out, f"{name}.report.json")
    run(out, f"{name}.live", ["--gpuidle", report])
    with open(report) as f:
        return untraced, json.load(f)


def per_step(r):
    d = r["devices"][0]
    steps = max(d.get("step_count") or 1, 1)
    return d["busy_ns"] / steps / 1e6, d["idle_ns"] / steps / 1e6, d


def describe(label, untraced, r):
    busy, idle, d = per_step(r)
    by = {k: v for k, v in d["idle_by_subcause"].items() if v}
    share = {k: v / max(d["idle_ns"], 1) for k, v in by.items()}
    return (f"{label}: untraced {untraced:.2f} ms/step; report busy {busy:.2f} + idle {idle:.2f} "
            f"ms/step (untraced truth: {max(untraced - busy, 0):.2f} ms idle/step); idle by "
            f"subcause: " + ", ".join(f"{k} {v:.0%}" for k, v in
                                     sorted(share.items(), key=lambda kv: -kv[1])))


def main():
    out, cli = sys.argv[1], sys.argv[2]
    os.makedirs(out, exist_ok=True)
    lines = []

    alone_ms, alone = measure(out, "alone")
    lines.append(describe("alone", alone_ms, alone))
    d = alone["devices"][0]
    check("alone: nothing waited behind another process",
          d["idle_by_subcause"].get(OTHER, 0) == 0, f"{OTHER} {d['idle_by_subcause'].get(OTHER)}")

    other = subprocess.Popen([sys.executable, "-c", OTHER_JOB], stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, text=True)
    try:
        ready = other.stdout.readline().strip()
        shared_ms, shared = measure(out, "shared")
    finally:
        other.kill()
        other.wait(timeout=30)
    lines.append(f"other process: pid {other.pid} ({ready})")
    lines.append(describe("shared", shared_ms, shared))
    busy, idle, d = per_step(shared)
    waited = d["idle_by_subcause"].get(OTHER, 0)
    unattributed = d["idle_by_subcause"].get("unattributed", 0)
    launch = d["idle_by_cause"].get("launch_bound", 0)
    check("shared: the new idle time waited behind the other process",
          waited >= 0.5 * d["idle_ns"] and waited > 0,
          f"{OTHER} {waited / max(d['idle_ns'], 1):.0%} of idle; unattributed "
          f"{unattributed / max(d['idle_ns'], 1):.0%}; launch_bound "
          f"{launch / max(d['idle_ns'], 1):.0%}")
    # Time-slicing stretches this job's kernels more than it opens gaps: the finding names the
    # other process in the busy readings too. Advice comes only where the lost time is worth
    # fixing; where it does, it names the pid.
    findings = [f for f in (d.get("gpu_metrics") or {}).get("findings", [])
                if f["kind"] == "other_process"]
    check("shared: the other_process finding names the pid, its turns inside this job's kernels "
          "and the wait behind it",
          any(f"pid {other.pid}," in f["what"] and "busy readings" in f["what"] and
              "waited behind" in f["what"] for f in findings),
          "; ".join(f["what"] for f in findings) or "no finding")
    advice = [a for a in shared.get("advice", []) if a["subcause"] == OTHER]
    if (shared.get("verdict") or {}).get("worth_fixing"):
        check("shared: the advice names the other process's pid",
              any(f"pid {other.pid} " in a["evidence"] for a in advice),
              "; ".join(f"{a['fix']} [{a['evidence']}]" for a in advice) or "no advice for it")
    else:
        lines.append(f"shared: lost {shared['verdict']['lost_share']:.2%} of the steady state: "
                     "nothing worth fixing, so no advice (the finding says it)")
    truth = max(shared_ms - busy, 0)
    check("shared: the report's idle per step is the untraced truth's (within 25% or 1 ms)",
          abs(idle - truth) <= max(0.25 * truth, 1.0),
          f"report {idle:.2f} ms/step, untraced {shared_ms:.2f} - busy {busy:.2f} = {truth:.2f}")

    # The same attribution from the trace alone.
    trace = os.path.join(out, "shared.report.trace.json")
    p = subprocess.run([cli, "analyze", "--format", "json", trace], capture_output=True, text=True,
                       timeout=120)
    again = json.loads(p.stdout) if p.returncode == 0 else None
    if again:
        a = again["devices"][0]
        share_live = waited / max(d["idle_ns"], 1)
        share_file = a["idle_by_subcause"].get(OTHER, 0) / max(a["idle_ns"], 1)
        check("analyze of the shared trace: the same share waited behind the other process",
              abs(share_live - share_file) <= 0.02, f"live {share_live:.1%}, from the trace "
              f"{share_file:.1%}")
    else:
        check("analyze of the shared trace", False, p.stderr[-500:])
    with open(trace, "rb") as f, gzip.open(trace + ".gz", "wb") as g:
        shutil.copyfileobj(f, g)
    for name in ("alone.report.trace.json", "shared.report.trace.json"):
        os.remove(os.path.join(out, name))

    return finish(out, "shared_gpu.md", "shared gpu", lines)


if __name__ == "__main__":
    sys.exit(main())
