#!/usr/bin/env python3
"""Checks the reports that examples/python/*.py --gpuidle wrote on the GPU machine (issue 4's
proof): each puts at least 90% of its idle time in the intended cause through gpuidle.profile(),
the healthy loop idles under 5% of its window, item_sync's worst sync names the `.item()`
line as its call site, and the tiny MLP's launch-bound offenders name its forward, backward and
optimizer lines. Prints a table; exit status 1 if a check fails.

  tests/gpu/python/check_reports.py REPORT_DIR
"""
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLES = os.path.join(HERE, "..", "..", "..", "examples", "python")


def line_of(script, needle):
    with open(os.path.join(EXAMPLES, script)) as f:
        for number, line in enumerate(f, 1):
            if needle in line:
                return number
    raise SystemExit(f"{script}: no line with {needle!r}")


def share(device, key, by="idle_by_cause"):
    idle = device["idle_ns"]
    return device[by].get(key, 0) / idle if idle else 0.0


def main():
    folder = sys.argv[1]
    item_line = line_of("item_sync.py", "loss.item()")
    checks = [
        # (report, what, expected share key, by)
        ("dataloader_starved", "data_starved.dataloader", "idle_by_subcause"),
        ("tiny_mlp_launch_bound", "launch_bound", "idle_by_cause"),
        ("item_sync", "sync_bound", "idle_by_cause"),
    ]
    failed = False
    print("| script | window ms | idle % | expected | share | verdict |")
    print("|---|---|---|---|---|---|")
    for name, key, by in checks + [("healthy_matmul", None, None)]:
        path = os.path.join(folder, f"{name}.json")
        try:
            with open(path) as f:
                report = json.load(f)
            device = report["devices"][0]
        except (OSError, ValueError, KeyError, IndexError) as e:
            print(f"| {name} | | | | no report ({e}) | FAIL |")
            failed = True
            continue
        idle_pct = 100.0 * device["idle_ns"] / device["phases"]["steady"]["ns"]  # steady state
        if key is None:
            ok = idle_pct < 5.0
            print(f"| {name} | {device['window_ns'] / 1e6:.1f} | {idle_pct:.2f}% | idle < 5% | "
                  f"{idle_pct:.2f}% | {'ok' if ok else 'FAIL'} |")
        else:
            s = share(device, key, by)
            ok = s >= 0.90
            print(f"| {name} | {device['window_ns'] / 1e6:.1f} | {idle_pct:.1f}% | {key} | "
                  f"{100 * s:.1f}% | {'ok' if ok else 'FAIL'} |")
        failed |= not ok
        if name == "item_sync":
            syncs = [o for o in report["offenders"] if o["cause"] == "sync_bound"]
            top = syncs[0] if syncs else {}
            site = top.get("site", "")
            ok = re.search(rf"item_sync\.py:{item_line}\b", site) is not None
            failed |= not ok
            print(f"| item_sync top sync offender | | | item_sync.py:{item_line} | "
                  f"{site or '(none)'} ({top.get('idle_ns', 0) / 1e6:.1f} ms, "
                  f"{top.get('what', '')}) | {'ok' if ok else 'FAIL'} |")
        if name == "tiny_mlp_launch_bound":
            # The forward pass and the optimizer step run inside call-site markers (PyTorch
            # launches with the GIL released); autograd's backward threads take the line waiting
            # in loss.backward(). At least 90% of the launch offenders' idle time must name one
            # of the three lines, and each line must be named.
            launches = [o for o in report["offenders"] if o["cause"] == "launch_bound"]
            lines = [line_of("tiny_mlp_launch_bound.py", n)
                     for n in ("model(x)", "loss.backward()", "opt.step()")]
            named_ns = {line: 0 for line in lines}
            for o in launches:
                m = re.search(r"tiny_mlp_launch_bound\.py:(\d+)\b", o["site"])
                if m and int(m.group(1)) in named_ns:
                    named_ns[int(m.group(1))] += o["idle_ns"]
            total = sum(o["idle_ns"] for o in launches)
            named = sum(named_ns.values()) / total if total else 0.0
            ok = named >= 0.90 and all(named_ns.values())
            failed |= not ok
            found = ", ".join(f"line {line}: {ns / 1e6:.1f} ms" for line, ns in named_ns.items())
            print(f"| tiny_mlp launch offenders' sites | | | lines "
                  f"{', '.join(map(str, lines))} each named, >= 90% of launch offenders' idle | "
                  f"{100 * named:.1f}% named ({found}; {len(launches)} offenders) | "
                  f"{'ok' if ok else 'FAIL'} |")
    print("\nall checks passed" if not failed else "\nSOME CHECKS FAILED")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
