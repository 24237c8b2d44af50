#!/usr/bin/env python3
"""Prints, as Markdown, what gpuidle reports for each recorded scenario trace.

  tests/replay/scenario_table.py build/bin/gpuidle tests/data/traces/torch [--sweep|--ranks]

Used to write docs/VALIDATION.md (the table; --ranks: the two-rank straggler job) and
docs/ANALYSIS.md (--sweep: the share of the expected cause for several launch_gap_max
values). Standard library only.
"""
import json
import subprocess
import sys
import tempfile
from pathlib import Path

# scenario -> (expected cause or "healthy", expected subcause)
EXPECTED = {
    "dataloader_starved": ("data_starved", "data_starved.dataloader"),
    "tiny_mlp_launch_bound": ("launch_bound", "launch_bound.launch_overhead"),
    "item_sync": ("sync_bound", "sync_bound.host_sync"),
    "pageable_h2d": ("data_starved", "data_starved.h2d_copy"),
    "healthy_matmul": ("healthy", None),
    "mixed_resnet": ("mixed", None),
    "one_of_two_gpus": ("healthy", None),
}


def analyze(gpuidle, trace, extra=()):
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "r.json"
        subprocess.run([gpuidle, "analyze", "--quiet", "--format", "json", "--out", str(out),
                        *extra, str(trace)], check=True)
        return json.loads(out.read_text())


def share(part, whole):
    return 100.0 * part / whole if whole else 0.0


def steady_ns(d):
    """The device's steady state, which busy and idle time describe (gpuidle.report/2); the
    whole window in older reports."""
    return d["phases"]["steady"]["ns"] if "phases" in d else d["window_ns"]


def table(gpuidle, folder):
    print("| scenario | window ms | steady ms | busy % | idle ms | data_starved | launch_bound "
          "| sync_bound | unattributed | expected | verdict |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for name, (cause, subcause) in EXPECTED.items():
        r = analyze(gpuidle, Path(folder) / f"{name}.json.gz")
        d = r["devices"][0]
        idle, by = d["idle_ns"], d["idle_by_cause"]
        cells = [f"{share(by[c], idle):.1f}%" for c in
                 ("data_starved", "launch_bound", "sync_bound", "unattributed")]
        if cause == "healthy":
            ok = share(idle, steady_ns(d)) < 3.0
            expected = "idle < 3%"
        elif cause == "mixed":
            ok = share(by["data_starved"], idle) >= 30 and share(by["launch_bound"], idle) >= 30
            expected = "data + launch, each >= 30%"
        else:
            got = share(d["idle_by_subcause"][subcause], idle)
            ok = share(by[cause], idle) >= 80 and got >= 80
            expected = f"{subcause} >= 80% ({got:.1f}%)"
        print(f"| {name} | {d['window_ns'] / 1e6:.1f} | {steady_ns(d) / 1e6:.1f} "
              f"| {share(d['busy_ns'], steady_ns(d)):.1f} "
              f"| {idle / 1e6:.1f} | " + " | ".join(cells) + f" | {expected} | "
              f"{'pass' if ok else 'FAIL'} |")


def sweep(gpuidle, folder):
    values = [50, 100, 200, 500, 1000, 2000, 5000]
    print("| scenario (expected cause) | " + " | ".join(f"{v} us" for v in values) + " |")
    print("|---|" + "---|" * len(values))
    for name, (cause, _) in EXPECTED.items():
        if cause in ("healthy", "mixed"):
            continue
        row = []
        for v in values:
            r = analyze(gpuidle, Path(folder) / f"{name}.json.gz", ["--launch-gap-max-us", str(v)])
            d = r["devices"][0]
            row.append(f"{share(d['idle_by_cause'][cause], d['idle_ns']):.1f}%")
        print(f"| {name} ({cause}) | " + " | ".join(row) + " |")


def ranks(gpuidle, folder):
    paths = [str(Path(folder) / f"nccl_straggler.rank{r}.json.gz") for r in (0, 1)]
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "r.json"
        subprocess.run([gpuidle, "analyze", "--quiet", "--format", "json", "--out", str(out),
                        *paths], check=True)
        r = json.loads(out.read_text())
    print("| rank | GPU | window ms | busy % | comm ms | comm waiting for peers ms | idle ms "
          "| data_starved.host | unattributed |")
    print("|---|---|---|---|---|---|---|---|---|")
    for d in r["devices"]:
        sub = d["idle_by_subcause"]
        print(f"| {d['rank']} | {d['device']} | {d['window_ns'] / 1e6:.1f} "
              f"| {share(d['busy_ns'], steady_ns(d)):.1f} | {d['comm_ns'] / 1e6:.1f} "
              f"| {d['comm_wait_ns'] / 1e6:.1f} | {d['idle_ns'] / 1e6:.1f} "
              f"| {share(sub['data_starved.host'], d['idle_ns']):.1f}% "
              f"| {share(sub['unattributed'], d['idle_ns']):.1f}% |")
    print(f"\nvisible GPUs {r['visible_device_count']}, unused {r['unused_devices']}; advice: " +
          ", ".join(f"{a['subcause']} {100 * a['share_of_lost_time']:.0f}%" for a in r["advice"]))


if __name__ == "__main__":
    gpuidle, folder = sys.argv[1], sys.argv[2]
    mode = sys.argv[3] if len(sys.argv) > 3 else "--table"
    {"--table": table, "--sweep": sweep, "--ranks": ranks}[mode](gpuidle, folder)
