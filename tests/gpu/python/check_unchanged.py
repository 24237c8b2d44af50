#!/usr/bin/env python3
"""Checks the reports of the unchanged real-client programs (examples/python/unchanged/*.py,
issue 12's proof), profiled on the GPU machine with no change to their code: `gpuidle run`,
`python -m gpuidle run` and `LD_PRELOAD=libgpuidle.so` (tests/gpu/run_on_device.sh unchanged).

For each program and way in:
  - the program ran to its end (exit 0, its last line printed);
  - start-up is reported apart from the steady state: a non-zero start-up with a named largest
    part (and, where the program expects it, that part's kind);
  - the expected cause holds at least 80% of the steady-state idle time (single-cause
    programs), and the expected subcause where one is named;
  - where one-off compilation is expected, a compilation part is reported (in start-up, or
    taken out of the steady state);
  - for the Trainer and Lightning programs, gap records or offenders carry a Python frame
    ("file.py:line function"); for Lightning, those of its data-starved time;
  - no process of the run printed "no CUDA activity was recorded" (no second line from a child
    process), and the run wrote exactly its one report;
  - where the run saved a trace and GPUIDLE_BIN is given, `gpuidle analyze` of the trace gives
    the identical report (the trace becomes tests/data/traces/unchanged/ for the CI replay).
Prints a Markdown table; exit status 1 if a check fails. Standard library only.

  tests/gpu/python/check_unchanged.py OUT_DIR [GPUIDLE_BIN]

OUT_DIR holds reports/unchanged/<program>.<way>.json, traces/unchanged/<program>.trace.json
and logs/unchanged.<program>.<way>.{log,status}, as run_on_device.sh writes them.
"""
import json
import os
import re
import subprocess
import sys
import tempfile

MIN_SHARE = 0.80

# program -> what its docstring says the right answer is. Keep in step with the table of
# tests/replay/unchanged_programs_test.cc.
#   cause:        the steady-state cause expected to hold >= 80% of the steady idle time
#   subcause:     also >= 80% (None: the subcauses may mix)
#   startup_top:  the kind of the largest start-up part (None: any named part)
#   compilation:  a one-off compilation part must be reported (start-up or steady)
#   frames:       None, "any" (some gap or offender names a .py frame) or a cause whose gaps
#                 or offenders must name one
#   frame_hint:   a function name looked for in those frames (reported, not required)
#   present:      subcauses that must have some steady idle time
#   less_idle_than: a program whose steady idle share of its steady window must be larger
EXPECTED = {
    "trainer_gpt2": dict(cause="launch_bound", frames="any"),
    "lightning_slow_collate": dict(cause="data_starved", subcause="data_starved.dataloader",
                                   frames="data_starved", frame_hint="slow_collate"),
    "jax_host_read": dict(cause="sync_bound", compilation=True),
    "jax_op_by_op": dict(cause="launch_bound", compilation=True),
    "cupy_tiny_kernels": dict(cause="launch_bound", compilation=True),
    "torch_compile_default": dict(cause="launch_bound", startup_top="compilation",
                                  compilation=True),
    "torch_compile_reduce_overhead": dict(cause="launch_bound", startup_top="compilation",
                                          compilation=True, present=["launch_bound.kernel_gap"],
                                          less_idle_than="torch_compile_default"),
}
WAYS = ("run", "pym", "preload")  # gpuidle run, python -m gpuidle run, LD_PRELOAD
FRAME = re.compile(r"[\w./<>-]+\.py[:(]\d+")


# --- where the report keeps things (docs/REPORT_SCHEMA.md; adapt here when it moves) --------------

def steady_view(report):
    """The first device's steady state, from one report, as plain numbers and lists:
    window, start-up and steady spans (ns), steady idle per cause and subcause, one-off parts
    [(phase, kind, ns, evidence)], and the report's step source and warnings.

    The layout read (json_writer.cc): devices[].steady_start_ns / steady_end_ns and
    devices[].phases.{start_up,steady,wind_down}.{start_ns,end_ns,ns,parts[{kind,ns,count,
    evidence}]}; a flat devices[].one_off[{phase,kind,ns,evidence}] is read too."""
    d = report["devices"][0]
    window_start = d.get("window_start_ns", report.get("window", {}).get("start_ns", 0))
    window_ns = d["window_ns"]
    phases = d.get("phases") if isinstance(d.get("phases"), dict) else {}
    parts = []
    for phase, p in phases.items():
        for o in (p or {}).get("parts", []) or []:
            parts.append((phase, o.get("kind", ""), int(o.get("ns", 0)), o.get("evidence", "")))
    for o in d.get("one_off", []) or []:
        parts.append((o.get("phase", ""), o.get("kind", ""), int(o.get("ns", 0)),
                      o.get("evidence", "")))
    steady_start = d.get("steady_start_ns", phases.get("steady", {}).get("start_ns"))
    steady_end = d.get("steady_end_ns", phases.get("steady", {}).get("end_ns"))
    if steady_start is None or steady_end is None or (
            steady_start == 0 and steady_end == 0 and not parts):
        steady_start, steady_end = window_start, window_start + window_ns  # no phases: all steady
    startup_ns = phases.get("start_up", {}).get("ns")
    if startup_ns is None:
        startup_ns = max(0, steady_start - window_start)
    return {
        "window_ns": window_ns,
        "startup_ns": startup_ns,
        "steady_ns": max(0, steady_end - steady_start),
        "busy_ns": d["busy_ns"],
        "idle_ns": d["idle_ns"],
        "by_cause": d["idle_by_cause"],
        "by_subcause": d["idle_by_subcause"],
        "parts": parts,
        "step_source": report.get("step_source", ""),
        "steps": len(report.get("steps", [])),
        "warnings": report.get("warnings", []),
        "gaps": [(g.get("cause", ""), " ".join([g.get("call_site", ""), g.get("evidence", "")]))
                 for g in report.get("longest_gaps", [])],
        "offenders": [(o.get("cause", ""), " ".join([o.get("site", ""), o.get("what", "")]))
                      for o in report.get("offenders", [])],
    }


# --- checks ---------------------------------------------------------------------------------------

def share(v, key):
    idle = v["idle_ns"]
    table = v["by_subcause"] if "." in key else v["by_cause"]
    return table.get(key, 0) / idle if idle else 0.0


def dominant(v):
    if not v["idle_ns"]:
        return "(no idle)", 0.0
    key = max(v["by_subcause"], key=lambda k: v["by_subcause"][k])
    return key, v["by_subcause"][key] / v["idle_ns"]


def python_frames(v, cause):
    """The .py frames in gap records and offenders (of one cause, or of any when cause is
    "any")."""
    found = []
    for c, text in v["gaps"] + v["offenders"]:
        if cause not in ("any", c):
            continue
        if FRAME.search(text):
            found.append(text.strip())
    return found


def read_text(path):
    try:
        with open(path, errors="replace") as f:
            return f.read()
    except OSError:
        return ""


def status_of(out, name):
    """exit code and wall seconds that run_on_device.sh kept for one run."""
    fields = dict(kv.split("=", 1) for kv in read_text(
        os.path.join(out, "logs", name + ".status")).split() if "=" in kv)
    return fields.get("exit", "?"), fields.get("wall_s", "?")


def comparable(report):
    r = dict(report)
    r.pop("inputs", None)
    return r


def read_back(gpuidle, trace, live):
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "r.json")
        p = subprocess.run([gpuidle, "analyze", "--quiet", "--format", "json", "--out", path,
                            trace], capture_output=True, text=True)
        if p.returncode != 0:
            return f"analyze failed: {p.stderr.strip()[:120]}"
        with open(path) as f:
            return "identical" if comparable(json.load(f)) == comparable(live) else "DIFFERENT"


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    out = sys.argv[1]
    gpuidle = sys.argv[2] if len(sys.argv) > 2 else None
    failed = False
    skipped = 0
    steady_idle = {}  # program -> steady idle share of the steady window, way "run"
    rows = []
    print("| program | way | exit | wall s | start-up s | start-up top part | steady s | "
          "steady idle % | dominant (share) | expected | share | compilation | py frames | "
          "steps | read back | verdict |")
    print("|" + "---|" * 16)
    for program, e in EXPECTED.items():
        for way in WAYS:
            name = f"unchanged.{program}.{way}"
            report_path = os.path.join(out, "reports", "unchanged", f"{program}.{way}.json")
            log = read_text(os.path.join(out, "logs", name + ".log"))
            rc, wall = status_of(out, name)
            if rc == "?" and not os.path.exists(report_path):
                continue  # this way is not run for this program
            if rc == "skipped":
                print(f"| {program} | {way} | skipped | | | | | | | | | | | | | "
                      f"not run (the part's time budget was spent) |")
                skipped += 1
                continue
            problems = []
            try:
                with open(report_path) as f:
                    report = json.load(f)
                v = steady_view(report)
            except (OSError, ValueError, KeyError, IndexError, TypeError) as ex:
                print(f"| {program} | {way} | {rc} | {wall} | | | | | | | | | | | | "
                      f"FAIL: no report ({type(ex).__name__}: {ex}) |")
                failed = True
                continue
            if rc != "0":
                problems.append(f"exit {rc}")
            if f"{program}:" not in log or " steps in " not in log:
                problems.append("no last line")
            if "no CUDA activity was recorded" in log:
                problems.append("a child said: no CUDA activity")
            others = [p for p in os.listdir(os.path.dirname(report_path))
                      if p.startswith(f"{program}.{way}.") and p != os.path.basename(report_path)]
            if others:
                problems.append(f"more reports: {others}")

            startup_parts = sorted((p for p in v["parts"] if p[0] == "start_up"),
                                   key=lambda p: -p[2])
            named = [p for p in startup_parts if p[1] and p[1] != "gpu_busy"]
            top = named[0] if named else None
            top_text = f"{top[1]} {top[2] / 1e9:.2f} s ({top[3][:40]})" if top else "(none)"
            if v["startup_ns"] <= 0:
                problems.append("no start-up")
            if top is None:
                problems.append("start-up without a named part")
            elif e.get("startup_top") and top[1] != e["startup_top"]:
                problems.append(f"start-up top {top[1]}, expected {e['startup_top']}")

            compile_ns = {ph: ns for ph, kind, ns, _ in v["parts"] if kind == "compilation"}
            compile_text = ", ".join(f"{ph} {ns / 1e9:.2f} s" for ph, ns in compile_ns.items())
            if e.get("compilation") and not any(compile_ns.values()):
                problems.append("no compilation part")

            expected = e.get("subcause") or e["cause"]
            got = share(v, e["cause"])
            if got < MIN_SHARE:
                problems.append(f"{e['cause']} {100 * got:.1f}% < 80%")
            if e.get("subcause"):
                got = share(v, e["subcause"])
                if got < MIN_SHARE:
                    problems.append(f"{e['subcause']} {100 * got:.1f}% < 80%")
            for key in e.get("present", []):
                if share(v, key) <= 0:
                    problems.append(f"no {key}")

            frames_text = ""
            if e.get("frames"):
                frames = python_frames(v, e["frames"])
                frames_text = f"{len(frames)}: {frames[0][:60]}" if frames else "none"
                if not frames:
                    problems.append(f"no Python frame on {e['frames']} gaps/offenders")
                if e.get("frame_hint"):
                    hit = any(e["frame_hint"] in f for f in frames)
                    frames_text += f"; {e['frame_hint']} {'named' if hit else 'not named'}"

            steady_share = v["idle_ns"] / v["steady_ns"] if v["steady_ns"] else 0.0
            if way == "run":
                steady_idle[program] = steady_share
            back = ""
            trace = os.path.join(out, "traces", "unchanged", f"{program}.trace.json")
            if way == "run" and gpuidle and os.path.exists(trace):
                back = read_back(gpuidle, trace, report)
                if back != "identical":
                    problems.append(f"read back: {back}")
            dom, dom_share = dominant(v)
            rows.append((program, way, problems))
            verdict = "ok" if not problems else "FAIL: " + "; ".join(problems)
            failed |= bool(problems)
            print(f"| {program} | {way} | {rc} | {wall} | {v['startup_ns'] / 1e9:.2f} | {top_text} | "
                  f"{v['steady_ns'] / 1e9:.2f} | {100 * steady_share:.1f}% | "
                  f"{dom} ({100 * dom_share:.1f}%) | {expected} >= 80% | "
                  f"{100 * share(v, expected):.1f}% | {compile_text or '-'} | {frames_text or '-'} | "
                  f"{v['steps']} ({v['step_source'] or 'no step source'}) | {back or '-'} | "
                  f"{verdict} |")
            for w in v["warnings"]:
                print(f"|  | warning | {w} |")

    for program, e in EXPECTED.items():
        other = e.get("less_idle_than")
        if not other:
            continue
        mine, theirs = steady_idle.get(program), steady_idle.get(other)
        if mine is None or theirs is None:
            print(f"\n{program} vs {other}: steady idle share not comparable (a run is missing): FAIL")
            failed = True
            continue
        ok = mine < theirs
        failed |= not ok
        print(f"\n{program}: steady idle {100 * mine:.1f}% of its steady window, {other}: "
              f"{100 * theirs:.1f}% (expected smaller): {'ok' if ok else 'FAIL'}")
    if not rows:
        print("\nno reports found")
        failed = True
    if skipped:
        print(f"\n{skipped} run(s) not run: the proof is incomplete")
    print("\nall checks passed" if not failed else "\nSOME CHECKS FAILED")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
