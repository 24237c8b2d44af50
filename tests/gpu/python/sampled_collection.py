"""Sampled collection on a real GPU (issue 15): a tiny MLP trains for about 20 s under
``gpuidle.profile(sample="1/4", ...)``, which records 1 s of every 4 with CUPTI detached in
between, while it publishes periodic summaries, a Prometheus textfile and a scrape port. Then
the same loop is traced in full, and the two reports' cause shares are compared.

  python3 sampled_collection.py [--seconds 20] [--no-data-wait] [--out DIR]

Checks (one PASS/FAIL line each; exit status 1 if any failed):
  - report.coverage: 4..6 windows, about 1 s traced in each, 20-30% of the span traced;
  - the summary file (written every 5 s) is JSON with a "coverage" key;
  - the metrics file parses as Prometheus text, has gpuidle_idle_seconds_total for every
    subcause and gpuidle_windows_total equal to the report's windows, and its idle seconds sum
    to the report's idle time;
  - two scrapes of http://127.0.0.1:PORT/metrics while the loop runs: 200, text/plain
    version 0.0.4, the same metric families as the file, gpuidle_windows_total growing;
  - the cause shares of the sampled and the full trace agree within 5 points.
Step times (untraced, inside windows, between windows, full trace) are printed, not judged.
With the data-wait variant (default on) a 3 ms gpuidle.data() sleep per step makes the loop
data-starved, and the two reports must agree on that too.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import re
import socket
import statistics
import sys
import tempfile
import threading
import time
import urllib.request

import torch

import gpuidle
from gpuidle._native import _gpuidle

SAMPLE = "1/4"  # 1 s of every 4 s
WINDOW_S, PERIOD_S = 1.0, 4.0
AGREE_POINTS = 5.0

_results: list[tuple[str, bool, str]] = []


def check(name: str, ok: bool, detail: str = "") -> bool:
    _results.append((name, ok, detail))
    print(f"{'PASS' if ok else 'FAIL'}: {name}{': ' + detail if detail else ''}", flush=True)
    return ok


def make_step(data_wait_s: float):
    """One Adam step of a 12-layer MLP, width 64, batch 32 (launch-bound on an H200)."""
    layers = []
    for _ in range(12):
        layers += [torch.nn.Linear(64, 64), torch.nn.ReLU()]
    model = torch.nn.Sequential(*layers).cuda()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3, foreach=False)
    x = torch.randn(32, 64, device="cuda")
    y = torch.randn(32, 64, device="cuda")

    def step():
        if data_wait_s > 0:
            with gpuidle.data():  # a batch that takes 3 ms to arrive
                time.sleep(data_wait_s)
        loss = torch.nn.functional.mse_loss(model(x), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()

    return step


def run_for(step, seconds: float) -> tuple[list[float], list[float]]:
    """Steps for `seconds`; each step's host time (ms), split by whether gpuidle was recording
    when it began (inside a window) or not."""
    inside, outside = [], []
    end = time.perf_counter() + seconds
    while True:
        t0 = time.perf_counter()
        if t0 >= end:
            break
        recording = _gpuidle.recording()
        step()
        (inside if recording else outside).append((time.perf_counter() - t0) * 1e3)
    torch.cuda.synchronize()
    return inside, outside


def median(xs: list[float]) -> float:
    return statistics.median(xs) if xs else float("nan")


# --- Prometheus text format (exposition format 0.0.4), just enough to check gpuidle's ---------

_SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})?\s+(\S+)(\s+-?\d+)?$')
_LABEL = re.compile(r'\s*([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"\s*(,|$)')


def parse_prometheus(text: str) -> tuple[dict[str, str], list[tuple[str, dict[str, str], float]]]:
    """The families' TYPEs and the samples (name, labels, value); ValueError on a bad line."""
    types: dict[str, str] = {}
    samples = []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        if line.startswith("#"):
            parts = line.split(None, 3)
            if len(parts) >= 4 and parts[1] == "TYPE":
                types[parts[2]] = parts[3].strip()
            elif len(parts) < 3 or parts[1] not in ("HELP", "TYPE"):
                raise ValueError(f"line {n}: bad comment {line!r}")
            continue
        m = _SAMPLE.match(line)
        if not m:
            raise ValueError(f"line {n}: not a sample {line!r}")
        labels: dict[str, str] = {}
        rest = m.group(3) or ""
        while rest:
            lm = _LABEL.match(rest)
            if not lm:
                raise ValueError(f"line {n}: bad labels {m.group(3)!r}")
            labels[lm.group(1)] = lm.group(2)
            rest = rest[lm.end():]
        value = float(m.group(4))
        if not math.isfinite(value):
            raise ValueError(f"line {n}: value {m.group(4)}")
        samples.append((m.group(1), labels, value))
    for name, _, _ in samples:
        if name not in types:
            raise ValueError(f"{name}: a sample without a TYPE line")
    return types, samples


def value_of(samples, name: str) -> float | None:
    values = [v for n, _, v in samples if n == name]
    return sum(values) if values else None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Scraper(threading.Thread):
    """Scrapes the port at the given times (s after start), once the first window has closed."""

    def __init__(self, port: int, at_s: list[float]) -> None:
        super().__init__(daemon=True)
        self.url = f"http://127.0.0.1:{port}/metrics"
        self.at_s = at_s
        self.scrapes: list[tuple[int, str, str]] = []  # (status, content type, body)
        self.errors: list[str] = []
        self.began = time.monotonic()

    def run(self) -> None:
        for at in self.at_s:
            time.sleep(max(0.0, self.began + at - time.monotonic()))
            try:
                with urllib.request.urlopen(self.url, timeout=5) as r:
                    self.scrapes.append((r.status, r.headers.get("Content-Type", ""),
                                         r.read().decode("utf-8")))
            except Exception as e:  # noqa: BLE001  (reported as a failed check)
                self.errors.append(f"{type(e).__name__}: {e}")


def shares_line(report) -> str:
    return ", ".join(f"{c} {100 * s:.1f}%" for c, s in report.cause_shares.items())


def max_difference_points(a, b) -> float:
    return max(abs(a.cause_shares[c] - b.cause_shares[c]) * 100 for c in gpuidle.CAUSES)


def sampled_run(step, seconds: float, out_dir: str, label: str, outputs: bool):
    """The loop under a sampled profile; with outputs, the summaries, metrics and scrapes too."""
    kwargs = {}
    scraper = None
    paths = {}
    if outputs:
        paths = {"summary": os.path.join(out_dir, f"{label}.summary.json"),
                 "metrics": os.path.join(out_dir, f"{label}.prom")}
        port = free_port()
        kwargs = dict(summary_every_s=5, summary_file=paths["summary"],
                      metrics_file=paths["metrics"], metrics_port=port)
        # After the 2nd and the 4th window have closed (at 5 s and 13 s).
        scraper = Scraper(port, [6.0, 14.0])
    with gpuidle.profile(sample=SAMPLE, quiet=True, **kwargs) as p:
        if scraper is not None:
            scraper.start()
        inside, outside = run_for(step, seconds)
    if scraper is not None:
        scraper.join(timeout=10)
    return p, inside, outside, scraper, paths


def check_sampled(p, scraper, paths, seconds: float) -> None:
    r = p.report
    if not check("sampled profile made a report", r is not None, p.error or ""):
        return
    c = r.coverage
    if not check("report.coverage is set", c is not None, repr(r)):
        return
    print(f"coverage: {c} (traced {c.traced_s:.2f} s, span {c.span_s:.2f} s)")
    expected = math.floor(seconds / PERIOD_S) + 1
    check("windows 4..6", 4 <= c.windows <= 6,
          f"{c.windows} ({expected - 1} or {expected} expected)")
    check("traced share 20-30%", 0.20 <= c.traced_share <= 0.30, f"{c.traced_share:.1%}")
    # The last window may have been cut short by the stop; the others last about 1 s.
    check("about 1 s traced per window", 0.8 * (c.windows - 1) * WINDOW_S <= c.traced_s <=
          1.2 * c.windows * WINDOW_S, f"{c.traced_s:.2f} s in {c.windows} windows")
    check("the summary says it is sampled", "sampled: traced" in r.summary())

    try:
        with open(paths["summary"], encoding="utf-8") as f:
            summary = json.load(f)
        check("summary file is JSON with coverage", "coverage" in summary,
              f"{summary.get('coverage')}")
        check("summary file's windows <= the report's",
              0 < summary.get("coverage", {}).get("windows", 0) <= c.windows)
    except (OSError, ValueError) as e:
        check("summary file is JSON with coverage", False, f"{type(e).__name__}: {e}")

    file_families: set[str] = set()
    try:
        with open(paths["metrics"], encoding="utf-8") as f:
            types, samples = parse_prometheus(f.read())
        file_families = set(types)
        idle = [(labels, v) for n, labels, v in samples if n == "gpuidle_idle_seconds_total"]
        check("metrics file parses as Prometheus text", True,
              f"{len(types)} families, {len(samples)} samples")
        subcauses = {f"{l.get('cause')}.{l.get('subcause')}" for l, _ in idle}
        want = {s if "." in s else f"{s}.{s}" for s in gpuidle.SUBCAUSES}
        check("gpuidle_idle_seconds_total of every subcause", want <= subcauses,
              f"{len(idle)} series")
        windows = value_of(samples, "gpuidle_windows_total")
        check("gpuidle_windows_total == report windows", windows == c.windows,
              f"{windows} vs {c.windows}")
        idle_s = sum(v for _, v in idle)
        check("metrics idle seconds == report idle", abs(idle_s - r.idle_ns / 1e9) < 1e-6,
              f"{idle_s:.6f} s vs {r.idle_ns / 1e9:.6f} s")
    except (OSError, ValueError) as e:
        check("metrics file parses as Prometheus text", False, f"{type(e).__name__}: {e}")

    if not check("port scraped twice", scraper is not None and len(scraper.scrapes) == 2,
                 "; ".join(scraper.errors) if scraper else ""):
        return
    windows_seen = []
    for i, (status, ctype, body) in enumerate(scraper.scrapes, 1):
        check(f"scrape {i}: 200, text/plain version=0.0.4", status == 200 and
              ctype.startswith("text/plain") and "version=0.0.4" in ctype, f"{status} {ctype}")
        try:
            types, samples = parse_prometheus(body)
        except ValueError as e:
            check(f"scrape {i} parses", False, str(e))
            continue
        check(f"scrape {i}: the file's families, gpuidle_idle_seconds_total among them",
              "gpuidle_idle_seconds_total" in types and set(types) == file_families,
              f"{len(types)} families")
        windows_seen.append(value_of(samples, "gpuidle_windows_total") or 0)
    check("gpuidle_windows_total grows between scrapes",
          len(windows_seen) == 2 and 0 < windows_seen[0] < windows_seen[1] <= c.windows,
          f"{windows_seen}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=20.0)
    ap.add_argument("--full-seconds", type=float, default=5.0)
    ap.add_argument("--no-data-wait", action="store_true")
    ap.add_argument("--out", default="")
    args = ap.parse_args()
    out_dir = args.out or tempfile.mkdtemp(prefix="gpuidle-sampled-")
    os.makedirs(out_dir, exist_ok=True)
    rows = []

    variants = [("launch", 0.0)] + ([] if args.no_data_wait else [("data_wait", 0.003)])
    for label, wait_s in variants:
        print(f"--- {label}: tiny MLP{' + 3 ms data wait' if wait_s else ''} ---", flush=True)
        step = make_step(wait_s)
        run_for(step, 2.0)  # warm-up: CUDA, cuBLAS, Adam's state
        _, untraced = run_for(step, 3.0)
        main_run = label == "launch"
        seconds = args.seconds if main_run else min(args.seconds, 12.0)
        p, inside, outside, scraper, paths = sampled_run(step, seconds, out_dir, label, main_run)
        if main_run:
            check_sampled(p, scraper, paths, seconds)
        elif p.report is not None:
            check(f"{label}: report.coverage is set", p.report.coverage is not None,
                  str(p.report.coverage))
        _, untraced_after = run_for(step, 3.0)
        with gpuidle.profile(quiet=True) as full:
            full_steps, _ = run_for(step, args.full_seconds)
        print(f"step ms (median): untraced {median(untraced):.3f} before, "
              f"{median(untraced_after):.3f} after; sampled: in windows {median(inside):.3f} "
              f"({len(inside)} steps), between {median(outside):.3f} ({len(outside)} steps); "
              f"full trace {median(full_steps):.3f} ({len(full_steps)} steps)")
        if p.report is None or full.report is None:
            check(f"{label}: both reports made", False,
                  f"sampled {p.report is not None}, full {full.report is not None}")
            continue
        print(f"sampled: {shares_line(p.report)}\nfull:    {shares_line(full.report)}")
        diff = max_difference_points(p.report, full.report)
        check(f"{label}: cause shares of sampled and full agree within {AGREE_POINTS:.0f} points",
              diff <= AGREE_POINTS, f"largest difference {diff:.1f} points")
        rows.append((label, p.report, full.report, diff, median(untraced), median(inside),
                     median(outside), median(full_steps)))

    print("\n| loop | report | windows | traced | idle | top cause | " +
          " | ".join(gpuidle.CAUSES) + " | step ms |")
    print("|---" * (6 + len(gpuidle.CAUSES) + 1) + "|")
    for label, sampled, full, diff, untraced, inside, outside, full_ms in rows:
        for kind, r, ms in (("sampled", sampled, f"{inside:.3f} in / {outside:.3f} out"),
                            ("full", full, f"{full_ms:.3f}")):
            c = r.coverage
            d = r.devices[0] if r.devices else None
            top = max(r.cause_shares.items(), key=lambda kv: kv[1])[0]
            print(f"| {label} | {kind} | {c.windows if c else '-'} | "
                  f"{f'{c.traced_share:.1%}' if c else 'all'} | "
                  f"{f'{d.idle_share:.1%}' if d else '-'} | {top} | " +
                  " | ".join(f"{100 * s:.1f}%" for s in r.cause_shares.values()) + f" | {ms} |")
        print(f"| {label} | untraced | | | | | " + " | " * (len(gpuidle.CAUSES) - 1) +
              f" | {untraced:.3f} |")
    failed = [n for n, ok, _ in _results if not ok]
    print(f"\nsampled collection: {len(_results) - len(failed)} of {len(_results)} checks passed"
          + (f"; FAILED: {', '.join(failed)}" if failed else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
