"""What the GPU proof scripts share: named checks, the cost table of with/without rounds, and
the Markdown summary each ends with (its last line is what tests/gpu/run_on_device.sh greps)."""
import os
import statistics

checks = []


def check(name, ok, detail):
    checks.append((name, bool(ok), detail))
    print(f"{'PASS' if ok else 'FAIL'} {name}: {detail}", flush=True)


def cost_table(times, scripts, what, limit=1.02):
    """times[(script, "with")] and times[(script, "without")]: ms/step of each round, each run in
    its own process. Checks the medians against `limit` and returns the table's lines."""
    lines = ["", f"| script | ms/step with {what} (median) | without | ratio |", "|---|---|---|---|"]
    for script in scripts:
        a = statistics.median(times[(script, "with")])
        b = statistics.median(times[(script, "without")])
        lines.append(f"| {script} | {a:.2f} | {b:.2f} | {a / b:.3f} |")
        check(f"cost {script}: within {limit - 1:.0%} of without", a <= b * limit,
              f"{a:.2f} vs {b:.2f} ms/step")
    return lines


def finish(out, table, label, lines):
    """Writes lines and the checks to OUT/table, prints them and the verdict; the exit status."""
    lines = lines + [""] + [f"- {'PASS' if ok else 'FAIL'} {n}: {d}" for n, ok, d in checks]
    text = "\n".join(lines) + "\n"
    with open(os.path.join(out, table), "w") as f:
        f.write(text)
    print(text)
    failed = [n for n, ok, _ in checks if not ok]
    print(f"{label}: " + (f"FAIL ({len(failed)})" if failed else f"all {len(checks)} pass"))
    return 1 if failed else 0
