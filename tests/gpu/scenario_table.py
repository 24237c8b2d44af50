#!/usr/bin/env python3
"""Prints, as Markdown, what gpuidle reported live on the GPU machine for each ground-truth
scenario and way in, checks it against the expected cause, and checks that each saved trace
reads back (`gpuidle analyze`) to the identical report.

  tests/gpu/scenario_table.py GPUIDLE_BIN OUT_DIR

OUT_DIR holds reports/<scenario>.<way>.json and traces/<scenario>.<way>.trace.json as
tests/gpu/run_on_device.sh writes them. Exit status 1 if any check failed. Standard library only.
"""
import json
import subprocess
import sys
import tempfile
from pathlib import Path

# scenario -> expected: a qualified subcause, a cause, or "healthy" (idle < 3% of the window)
EXPECTED = {
    "host_work_marked": "data_starved.dataloader",
    "host_work_unmarked": "data_starved.host",
    "pageable_h2d": "data_starved.h2d_copy",
    "tiny_kernels": "launch_bound",
    "sync_after_kernel": "sync_bound.host_sync",
    "d2h_after_kernel": "sync_bound.host_sync",
    "cross_stream_wait": "sync_bound.device_wait",
    "healthy": "healthy",
    "mixed": "mixed",
    # Unmodified PyTorch scripts under `gpuidle run`: the whole process is the window (Python
    # start-up and model set-up included) and nothing marks the DataLoader (the Python package
    # does that), so these check that injection into PyTorch works and what it reports.
    "torch_tiny_mlp": "report",
    "torch_dataloader": "data_starved",
}
WAYS = ("api", "run", "preload")
MIN_SHARE = 90.0
HEALTHY_MAX_IDLE = 3.0


def pct(part, whole):
    return 100.0 * part / whole if whole else 0.0


def expected_share(device, expected):
    idle = device["idle_ns"]
    if "." in expected:
        return pct(device["idle_by_subcause"][expected], idle)
    return pct(device["idle_by_cause"][expected], idle)


def comparable(report):
    r = dict(report)
    r.pop("inputs", None)
    return r


def round_trip(gpuidle, trace, live):
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "r.json"
        p = subprocess.run([gpuidle, "analyze", "--quiet", "--format", "json", "--out", str(out),
                            str(trace)], capture_output=True, text=True)
        if p.returncode != 0:
            return f"analyze failed: {p.stderr.strip()[:120]}"
        return "identical" if comparable(json.loads(out.read_text())) == comparable(live) else "DIFFERS"


def main():
    gpuidle, out = sys.argv[1], Path(sys.argv[2])
    failures = 0
    print("| scenario | way | window ms | idle % | data_starved | launch_bound | sync_bound "
          "| unattributed | expected | share | records | trace read back | verdict |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for name, expected in EXPECTED.items():
        for way in WAYS:
            path = out / "reports" / f"{name}.{way}.json"
            if not path.exists():
                if name.startswith("torch_") and way != "run":
                    continue
                print(f"| {name} | {way} | | | | | | | {expected} | | | | FAIL: no report |")
                failures += 1
                continue
            r = json.loads(path.read_text())
            d = max(r["devices"], key=lambda x: x["window_ns"])
            idle, by = d["idle_ns"], d["idle_by_cause"]
            idle_pct = pct(idle, d["phases"]["steady"]["ns"])  # the headline is the steady state
            cells = [f"{pct(by[c], idle):.1f}%" for c in
                     ("data_starved", "launch_bound", "sync_bound", "unattributed")]
            if expected == "healthy":
                share, ok = f"idle {idle_pct:.2f}%", idle_pct < HEALTHY_MAX_IDLE
            elif expected == "report":
                share, ok = "(whole process)", True
            elif expected == "mixed":
                top = sorted(by.items(), key=lambda kv: -kv[1])[:2]
                share = " + ".join(f"{k} {pct(v, idle):.0f}%" for k, v in top)
                ok = pct(by["unattributed"], idle) < 10.0
            else:
                s = expected_share(d, expected)
                share, ok = f"{s:.1f}%", s >= MIN_SHARE
            c = r["completeness"]
            records = c["status"] if c["status"] == "complete" else f"{c['dropped_records']} lost"
            trace = out / "traces" / f"{name}.{way}.trace.json"
            back = round_trip(gpuidle, trace, r) if trace.exists() else "(no trace)"
            ok = ok and back in ("identical", "(no trace)") and c["status"] == "complete"
            failures += not ok
            print(f"| {name} | {way} | {d['window_ns'] / 1e6:.1f} | {idle_pct:.1f}% | "
                  + " | ".join(cells)
                  + f" | {expected} | {share} | {records} | {back} | {'ok' if ok else 'FAIL'} |")
    print()
    print(f"{failures} check(s) failed" if failures else "all checks passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
