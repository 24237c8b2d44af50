#!/usr/bin/env python3
"""Issue 32 on the GPU machine: CUPTI's PM sampling of GPU throughput in live reports.

  PYTHONPATH=<package> tests/gpu/python/gpu_throughput.py OUT_DIR GPUIDLE_CLI PROBE

0. PROBE (tests/benchmarks/overhead/pm_sampling_probe.cc): the metrics the sampler chooses on
   this GPU and the GPU's clock against CLOCK_REALTIME, printed as it says them;
1. healthy_matmul (compute-bound) and memory_bound (elementwise, DRAM-bound), unchanged, each
   untraced (--plain: ms/step) and under gpuidle.profile() (report + trace): their throughput
   while busy told apart (tensor pipes vs DRAM), "memory_bound" named for the second only; the
   per-step clocks, power and throughput of the steps; the report's idle per step against the
   untraced truth (untraced ms/step minus the report's busy time per step);
2. `gpuidle analyze` of the matmul's live trace gives the same gpu_metrics as the live report;
3. two gpuidle.profile() blocks in one process (CUPTI detached in between, the samplers torn
   down before): both sampled; without the sampling (the control); and, where the package is a
   probe build (PY_PROBES=1), with CUPTI left attached between them (GPUIDLE_BENCH_LEAVE_OUT=
   detach: the samplers stopped and started again), the alternative design;
4. cost: both scripts ROUNDS times with the sampling (GPUIDLE_GPU_THROUGHPUT_MS=10) and without
   (GPUIDLE_GPU_THROUGHPUT_MS=0), alternating, each run its own process: median ms/step.
Writes OUT_DIR/gpu_throughput.md. Exit status 1 if a check fails.
"""
import gzip
import json
import os
import re
import shutil
import subprocess
import sys

from proof_checks import check, cost_table, finish

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLES = os.path.normpath(os.path.join(HERE, "..", "..", "..", "examples", "python"))
ROUNDS = 2
STEPS = 200
ON = {"GPUIDLE_GPU_THROUGHPUT_MS": "10"}  # off by default until this script has passed

TWO_PROFILES = r"""
import sys, torch, gpuidle
a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
for i in (1, 2):
    with gpuidle.profile(out=f"{sys.argv[1]}/twice_{i}.json", format="json", quiet=True) as p:
        for _ in range(150):
            with p.step():
                b = a @ a
        torch.cuda.synchronize()
print("done", flush=True)
"""

def run(script, out, name, args, env=None):
    p = subprocess.run([sys.executable, os.path.join(EXAMPLES, script), *args], capture_output=True,
                       text=True, timeout=300, env={**os.environ, **(env or {})})
    with open(os.path.join(out, f"{name}.log"), "w") as f:
        f.write(p.stdout + p.stderr)
    if p.returncode != 0:
        raise RuntimeError(f"{script}: exit {p.returncode}\n{p.stderr[-2000:]}")
    return float(re.findall(r"([0-9.]+) ms/step", p.stdout)[-1]), p.stderr


def live(script, out, name, env=ON, steps=STEPS):
    report = os.path.join(out, f"{name}.json")
    ms, err = run(script, out, name, ["--gpuidle", report, "--steps", str(steps)], env)
    with open(report) as f:
        return json.load(f), ms, err


def figures(th):
    keys = ("samples", "busy_samples", "period_ns", "kernel_time_share", "sm_active_pct",
            "tensor_active_pct", "dram_pct", "pcie_read_bytes_per_s", "pcie_write_bytes_per_s",
            "nvlink_read_bytes_per_s", "nvlink_write_bytes_per_s")
    return ", ".join(f"{k} {th[k]:.4g}" if isinstance(th[k], float) else f"{k} {th[k]}"
                     for k in keys if k in th)


def main():
    out, cli, probe = sys.argv[1], sys.argv[2], sys.argv[3]
    os.makedirs(out, exist_ok=True)
    lines = []

    # 0. What the sampler chooses here.
    p = subprocess.run([probe], capture_output=True, text=True, timeout=60)
    lines.append("pm_sampling_probe (exit %d):" % p.returncode)
    lines += ["    " + l for l in (p.stdout + p.stderr).splitlines()]
    print("\n".join(lines), flush=True)
    check("probe: PM sampling available", p.returncode == 0, p.stdout.splitlines()[:1])

    # 1. Compute-bound and memory-bound, told apart.
    results = {}
    # The memory-bound loop first (a fresh GPU) and for as long as the matmul loop runs (its
    # steps are 5x shorter): on 2026-12-07 a 0.6 s run of it after the matmul's had no samples.
    for script, steps in (("memory_bound.py", 5 * STEPS), ("healthy_matmul.py", STEPS)):
        name = script[:-3]
        untraced, _ = run(script, out, f"{name}_plain", ["--plain", "--steps", str(steps)])
        r, ms, err = live(script, out, name, steps=steps)
        results[name] = r
        d = r["devices"][0]
        m = d.get("gpu_metrics") or {}
        th = m.get("throughput") or {}
        steps = d["step_count"] or 1
        busy_per_step = d["busy_ns"] / steps / 1e6
        idle_per_step = d["idle_ns"] / steps / 1e6
        lines.append("")
        lines.append(f"{script}: untraced {untraced:.2f} ms/step, under gpuidle {ms:.2f} ms/step; "
                     f"report: busy {busy_per_step:.2f} + idle {idle_per_step:.2f} ms/step; "
                     f"untraced truth idle {max(untraced - busy_per_step, 0):.2f} ms/step")
        lines.append(f"  throughput: {figures(th) if th else m.get('throughput_unavailable')}")
        lines += [f"  - finding ({f['kind']}): {f['what']}: {f['fix']}" for f in m.get("findings", [])]
        if "gpuidle: GPU throughput not sampled" in err:
            lines.append("  stderr: " + [l for l in err.splitlines() if "throughput" in l][0])
        rows = [s for s in r.get("steps", []) if s.get("gpu")]
        for s in rows[:3]:
            lines.append(f"  step {s['name']}: {json.dumps(s['gpu'])}")
        check(f"{name}: throughput sampled", th.get("busy_samples", 0) >= 5, figures(th) if th else m)
        check(f"{name}: per-step readings", len(rows) >= min(3, len(r.get("steps", []))),
              f"{len(rows)} of {len(r.get('steps', []))} steps")
        kinds = [f["kind"] for f in m.get("findings", [])]
        if name == "healthy_matmul":
            check("matmul: not memory-bound, tensor pipes busy",
                  "memory_bound" not in kinds and th.get("tensor_active_pct", 0) > 20,
                  f"tensor {th.get('tensor_active_pct')}, dram {th.get('dram_pct')}, {kinds}")
        else:
            check("elementwise: memory-bound named",
                  "memory_bound" in kinds and th.get("dram_pct", 0) >= 60,
                  f"dram {th.get('dram_pct')}, tensor {th.get('tensor_active_pct')}, {kinds}")

    # 2. The trace carries the samples: analysed offline, the same gpu_metrics.
    trace = os.path.join(out, "healthy_matmul.trace.json")
    p = subprocess.run([cli, "analyze", "--format", "json", "-o", os.path.join(out, "offline.json"),
                        trace], capture_output=True, text=True, timeout=300)
    offline = {}
    if p.returncode == 0:
        with open(os.path.join(out, "offline.json")) as f:
            offline = json.load(f)["devices"][0].get("gpu_metrics") or {}
    live_m = results["healthy_matmul"]["devices"][0].get("gpu_metrics") or {}

    def close(a, b):  # the live report skipped a warm-up step: a steady state a step apart
        keys = ("sm_active_pct", "tensor_active_pct", "dram_pct")
        return bool(a) and bool(b) and all(abs(a[k] - b[k]) <= 0.05 * max(b[k], 1) for k in keys)

    check("offline: analyze of the live trace gives the live gpu_metrics",
          p.returncode == 0 and close(offline.get("throughput"), live_m.get("throughput")) and
          [f["kind"] for f in offline.get("findings", [])] ==
          [f["kind"] for f in live_m.get("findings", [])] and
          abs(offline.get("samples", 0) - live_m.get("samples", 0)) <= 2,
          p.stderr[-300:] if p.returncode else
          f"throughput offline {offline.get('throughput')} vs live {live_m.get('throughput')}")
    if os.path.exists(trace):
        with open(trace, "rb") as f, gzip.open(trace + ".gz", "wb") as g:
            shutil.copyfileobj(f, g)
        os.remove(trace)

    # 3. Two profiles in one process (CUPTI detached in between), with the sampling and, as the
    # control, without it: the second profile must record the GPU's work in both.
    lines.append("")
    attached = {**ON, "GPUIDLE_BENCH_LEAVE_OUT": "detach"}
    for label, env in (("with PM sampling", ON), ("without", {"GPUIDLE_GPU_THROUGHPUT_MS": "0"}),
                       ("with PM sampling, CUPTI left attached (probe build only)", attached)):
        for i in (1, 2):
            if os.path.exists(os.path.join(out, f"twice_{i}.json")):
                os.remove(os.path.join(out, f"twice_{i}.json"))
        p = subprocess.run([sys.executable, "-c", TWO_PROFILES, out], capture_output=True,
                           text=True, timeout=300, env={**os.environ, **env})
        both = []
        for i in (1, 2):
            try:
                with open(os.path.join(out, f"twice_{i}.json")) as f:
                    devices = json.load(f)["devices"]
                m = (devices[0].get("gpu_metrics") or {}) if devices else {}
                both.append(m.get("throughput") or m.get("throughput_unavailable") or
                            ("no GPU work recorded" if not devices else "no throughput"))
            except OSError as e:
                both.append(str(e))
        lines.append(f"two profiles in one process, {label} (exit {p.returncode}): {both}")
        if env is attached:
            pass  # for information: which design holds where the product's does not
        elif env is ON:
            check("two profiles: both sampled",
                  p.returncode == 0 and all(isinstance(b, dict) for b in both),
                  p.stderr[-400:] if p.returncode else str(both))
        else:
            check("two profiles without PM sampling: both recorded GPU work",
                  p.returncode == 0 and "no GPU work recorded" not in both, str(both))

    # 4. What the sampling costs (THROUGHPUT_QUICK=1: not in this round).
    if os.environ.get("THROUGHPUT_QUICK") == "1":
        return finish(out, "gpu_throughput.md", "gpu throughput", lines)
    times = {}
    for i in range(ROUNDS):
        for script in ("healthy_matmul.py", "memory_bound.py"):
            for label, env in (("with", ON), ("without", {"GPUIDLE_GPU_THROUGHPUT_MS": "0"})):
                _, ms, _ = live(script, out, f"cost_{i}", env, steps=100)
                times.setdefault((script, label), []).append(ms)
    lines += cost_table(times, ("healthy_matmul.py", "memory_bound.py"), "PM sampling")
    return finish(out, "gpu_throughput.md", "gpu throughput", lines)


if __name__ == "__main__":
    sys.exit(main())
