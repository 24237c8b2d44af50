"""The tables of docs/VALIDATION.md and docs/PERFORMANCE.md for one observer run (issue 26).

  python3 observer_table.py DIR      (DIR: the observer folder of tests/gpu/run_on_device.sh,
                                      logs/observer/ of its results, or a copy in tests/data)

Reads the `result`, `gain` and after_profile lines of DIR/*.log, and the transformers Trainer's
runs (trainer.untraced.{100,400}.log: its own timing, untraced; trainer.run.report.json: the
report of its run under `gpuidle run`), and prints markdown: reported idle per step against the
untraced truth of the same process (the last profile's figures; with several profiles a process,
the verdict is on the median of their errors), the predicted gain against the fix's untraced
gain, and what each profiler leaves behind after it stops. Needs nothing but the standard
library.
"""
import glob
import json
import os
import re
import sys


def pairs(line):
    return dict(re.findall(r"(\w+)=(\S+)", line))


def lines_starting(path, word):
    with open(path) as f:
        return [pairs(l) for l in f if l.startswith(word + " ")]


def trainer_row(folder):
    """(untraced ms/step, busy, truth, reported, taken out, error %) or None."""
    steps_s = {}
    for n in (100, 400):
        path = os.path.join(folder, f"trainer.untraced.{n}.log")
        if not os.path.exists(path):
            return None
        with open(path) as f:
            m = re.search(r"(\d+) steps in ([0-9.]+) s", f.read())
        if not m:
            return None
        steps_s[int(m.group(1))] = float(m.group(2))
    report = os.path.join(folder, "trainer.run.report.json")
    if not os.path.exists(report):
        return None
    with open(report) as f:
        r = json.load(f)
    d = max(r["devices"], key=lambda d: d["busy_ns"])
    n = d["step_count"]
    # The difference of two runs over their difference in steps takes the start-up out.
    untraced = (steps_s[400] - steps_s[100]) * 1e3 / 300
    busy, idle = d["busy_ns"] / n / 1e6, d["idle_ns"] / n / 1e6
    truth = untraced - busy
    return untraced, busy, truth, idle, d.get("tracer_ns", 0) / n / 1e6, (idle - truth) / untraced * 100


def logs(folder, pattern="*.log"):
    """The processes' logs (device.log repeats their lines)."""
    return [p for p in sorted(glob.glob(os.path.join(folder, pattern)))
            if os.path.basename(p) != "device.log"]


def table(header, rows):
    """A markdown table after a blank line; nothing without rows."""
    if not rows:
        return
    print("\n| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for row in rows:
        print("| " + " | ".join(row) + " |")


def main():
    folder = sys.argv[1]
    rows = []
    for path in logs(folder):
        for r in lines_starting(path, "result"):
            if "label" in r:
                rows.append(r)
    print("| process | mode | untraced ms/step | busy ms/step | untraced idle | reported idle | "
          "taken out | error (of the untraced step) | each profile's error, median | within 5% | "
          "dominant | top gain <= untraced idle |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    within = 0
    for r in rows:
        ok = r["verdict"] == "PASS"
        within += ok
        print(f"| {r['label']} | {r['mode']} | {float(r['untraced_step_ms']):.2f} | "
              f"{float(r['busy_ms']):.2f} | {float(r['truth_idle_ms']):.2f} | "
              f"{float(r['reported_idle_ms']):.2f} | {float(r['tracer_ms']):.2f} | "
              f"{r['error_of_step']} | {r.get('profile_errors', '').replace(',', ', ')}"
              f"{', median ' + r['median_error'] if 'median_error' in r else ''} | "
              f"{'yes' if ok else 'no'} | {r['dominant']} | "
              f"{r['gain_within_cap']} |")
    t = trainer_row(folder)
    if t:
        ok = abs(t[5]) <= 5
        within += ok
        print(f"| transformers Trainer (gpuidle run; untraced: its own timing, two other "
              f"processes) | full | {t[0]:.2f} | {t[1]:.2f} | {t[2]:.2f} | {t[3]:.2f} | "
              f"{t[4]:.2f} | {t[5]:+.1f}% | | {'yes' if ok else 'no'} | | |")
    print(f"\nwithin 5%: {within} of {len(rows) + (1 if t else 0)}")
    gains = [g for p in logs(folder) for g in lines_starting(p, "gain")]
    table(["workload", "fix", "untraced ms/step before", "after", "measured gain",
           "predicted gain", "error", "within 20%"],
          [[g["label"], g["fix"], f"{float(g['untraced_step_ms']):.2f}",
            f"{float(g['fixed_step_ms']):.2f}", f"{float(g['measured_gain_ms']):.2f}",
            f"{float(g['predicted_gain_ms']):.2f}", g["error"],
            "yes" if g["verdict"] == "PASS" else "no"] for g in gains])
    after = [a for p in logs(folder, "after.*.log") for a in lines_starting(p, "result")]
    table(["profiler", "ms added per profile (20 healthy steps)",
           "launch-bound probe just after a stop / before", "after the last stop / before"],
          [[a["profiler"], f"{float(a['profile_added_ms']):.1f}", a["first_probe_ratio"],
            a["after_ratio"]] for a in after])
    return 0


if __name__ == "__main__":
    sys.exit(main())
