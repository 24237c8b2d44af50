#!/usr/bin/env python3
"""Prints, as Markdown, what gpuidle reports for each recorded scenario trace.

  tests/replay/scenario_table.py build/bin/gpuidle tests/data/traces/torch [--sweep]

Used to write docs/VALIDATION.md (the table) and docs/ANALYSIS.md (--sweep: the share of the
expected cause for several launch_gap_max values). Standard library only.
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
}


def analyze(gpuidle, trace, extra=()):
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "r.json"
        subprocess.run([gpuidle, "analyze", "--quiet", "--format", "json", "--out", str(out),
                        *extra, str(trace)], check=True)
        return json.loads(out.read_text())


def share(part, whole):
    return 100.0 * part / whole if whole else 0.0


def table(gpuidle, folder):
    print("| scenario | window ms | busy % | idle ms | data_starved | launch_bound | sync_bound "
          "| unattributed | expected | verdict |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for name, (cause, subcause) in EXPECTED.items():
        r = analyze(gpuidle, Path(folder) / f"{name}.json.gz")
        d = r["devices"][0]
        idle, by = d["idle_ns"], d["idle_by_cause"]
        cells = [f"{share(by[c], idle):.1f}%" for c in
                 ("data_starved", "launch_bound", "sync_bound", "unattributed")]
        if cause == "healthy":
            ok = share(idle, d["window_ns"]) < 3.0
            expected = "idle < 3%"
        elif cause == "mixed":
            ok = share(by["data_starved"], idle) >= 30 and share(by["launch_bound"], idle) >= 30
            expected = "data + launch, each >= 30%"
        else:
            got = share(d["idle_by_subcause"][subcause], idle)
            ok = share(by[cause], idle) >= 80 and got >= 80
            expected = f"{subcause} >= 80% ({got:.1f}%)"
        print(f"| {name} | {d['window_ns'] / 1e6:.1f} | {share(d['busy_ns'], d['window_ns']):.1f} "
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


if __name__ == "__main__":
    gpuidle, folder = sys.argv[1], sys.argv[2]
    (sweep if "--sweep" in sys.argv[3:] else table)(gpuidle, folder)
