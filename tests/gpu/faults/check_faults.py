"""Reads what tests/gpu/faults/run_faults.sh left in OUT_DIR and prints one line per row of the
fault matrix (docs/RELIABILITY.md): PASS, FAIL (with what happened), or SKIP (the row could not
be set up on this machine, or its condition did not occur). A missing step is a FAIL line; this
script never stops early.

  python3 tests/gpu/faults/check_faults.py OUT_DIR
"""
from __future__ import annotations

import json
import re
import sys
from pathlib import Path

OUT = Path(sys.argv[1]) if len(sys.argv) > 1 else Path("faults")
ROWS = []


class Fail(Exception):
    pass


class Skip(Exception):
    pass


def row(name):
    def register(check):
        ROWS.append((name, check))
        return check

    return register


class Step:
    """One step's folder: status, out, err and its reports."""

    def __init__(self, name):
        self.name = name
        self.dir = OUT / name
        status = self._read("status").strip()
        fields = dict(f.split("=", 1) for f in status.split() if "=" in f)
        self.state = fields.get("exit", "missing")
        self.code = int(self.state) if self.state.lstrip("-").isdigit() else None
        self.out = self._read("out")
        self.err = self._read("err")

    def _read(self, name):
        try:
            return (self.dir / name).read_text(errors="replace")
        except OSError:
            return ""

    def ran(self):
        """The step ran to an exit status; else Fail (Skip where the machine refused the setup)."""
        if self.state == "setup-refused":
            raise Skip(f"{self.name}: could not be set up here (unshare refused)")
        if self.code is None:
            raise Fail(f"{self.name}: not run ({self.state})")
        if self.code == 124 or self.code == 137:
            raise Fail(f"{self.name}: timed out (exit {self.code})")
        return self

    def reports(self):
        """{file name: parsed report or None if it is not JSON}."""
        found = {}
        for p in sorted(self.dir.glob("report*")):
            try:
                found[p.name] = json.loads(p.read_text())
            except (OSError, ValueError):
                found[p.name] = None
        return found

    def gpuidle_lines(self):
        return [l for l in self.err.splitlines() if l.startswith("gpuidle:")]

    def warnings(self):
        return [l for l in self.err.splitlines() if l.startswith("gpuidle: warning:")]

    def expect_code(self, code):
        if self.code != code:
            raise Fail(f"{self.name}: exit {self.code}, expected {code}; "
                       f"{short(self.err.strip().splitlines()[-1:] or '')}")

    def expect_out(self, pattern):
        m = re.search(pattern, self.out)
        if m is None:
            raise Fail(f"{self.name}: the program's output lacks /{pattern}/: {short(self.out)}")
        return m


def short(text, n=160):
    text = " | ".join(text) if isinstance(text, list) else str(text)
    text = text.replace("\n", " | ")
    return text if len(text) <= n else text[:n] + "..."


def kernels(report):
    return sum(int(d.get("kernel_count", 0)) for d in report.get("devices", []))


def completeness(report):
    return report.get("completeness") or {}


def the_report(step):
    reports = step.reports()
    if "report.json" not in reports:
        return None
    if reports["report.json"] is None:
        raise Fail(f"{step.name}: report.json is not valid JSON")
    return reports["report.json"]


# A process that ends without gpuidle's exit handler (a signal, _exit, abort) must leave a report,
# a report marked incomplete, or a word on stderr that there is none.
NO_REPORT_WORD = re.compile(r"no report|incomplete|not written|without (writing|a report)", re.I)


def report_or_word(step, want_kernels):
    report = the_report(step)
    if report is not None:
        status = completeness(report).get("status")
        if status == "incomplete":
            return f"report marked incomplete ({kernels(report)} kernels)"
        if kernels(report) >= want_kernels:
            return f"report with {kernels(report)} kernels ({status})"
        raise Fail(f"{step.name}: report with {kernels(report)} of {want_kernels} kernels, "
                   f"not marked incomplete ({status})")
    word = [l for l in step.gpuidle_lines() if NO_REPORT_WORD.search(l)]
    if word:
        return f"no report, and gpuidle says so: {short(word[0], 100)}"
    raise Fail(f"{step.name}: no report and no word of it (gpuidle lines: "
               f"{short(step.gpuidle_lines()) or 'none'})")


# --- rows -----------------------------------------------------------------------------------------

def unharmed_like(steps_with_reference):
    """Each step exited and printed as the reference did."""
    plain = steps_with_reference[0]
    for s in steps_with_reference[1:]:
        if s.code != plain.code or s.out != plain.out:
            raise Fail(f"{s.name}: exit {s.code}, output {short(s.out, 80)!r}; without gpuidle: "
                       f"exit {plain.code}, {short(plain.out, 80)!r}")
        if len(s.gpuidle_lines()) > 1:
            raise Fail(f"{s.name}: {len(s.gpuidle_lines())} gpuidle lines: "
                       f"{short(s.gpuidle_lines())}")


for _row, _what in (("nodriver", "no driver (libcuda.so.1 is not the driver)"),
                    ("nogpu", "no GPU visible (CUDA_VISIBLE_DEVICES=)")):
    @row(_what)
    def _check(r=_row):
        plain = Step(f"cxx.{r}.plain").ran()
        if plain.code == 0:
            raise Fail(f"{plain.name}: the program ran without error: the fault did not "
                       f"take effect")
        steps = [plain, Step(f"cxx.{r}.run").ran(), Step(f"cxx.{r}.preload").ran()]
        unharmed_like(steps)
        return (f"the program's own failure unchanged (exit {plain.code}, "
                f"{short(plain.out.strip(), 70)}); gpuidle lines: "
                f"{', '.join(str(len(s.gpuidle_lines())) for s in steps[1:])}")


def settings_step(name, must_name=None, report=False):
    ref = Step("cxx.reference").ran()
    s = Step(name).ran()
    unharmed_like([ref, s])
    w = s.warnings()
    if must_name is not None:
        if len(w) != 1 or must_name not in w[0]:
            raise Fail(f"{name}: expected one warning naming {must_name}; gpuidle said: "
                       f"{short(s.gpuidle_lines()) or 'nothing'}")
    got = the_report(s)
    if report and got is None:
        raise Fail(f"{name}: no report")
    if not report and got is not None:
        raise Fail(f"{name}: a report was written ({kernels(got)} kernels) although gpuidle "
                   f"should be off")
    return s, short(w[0], 110) if w else "no warning"


@row("libcupti missing (its folders hidden)")
def _():
    s, w = settings_step("cxx.nocupti.preload", must_name="CUPTI")
    return f"program unharmed; {w}"


@row("GPUIDLE_BUFFER_MB=lots (LD_PRELOAD)")
def _():
    return "program unharmed; " + settings_step("cxx.env.buffer_mb_junk", "GPUIDLE_BUFFER_MB")[1]


@row("GPUIDLE_FORMAT=xml (LD_PRELOAD)")
def _():
    return "program unharmed; " + settings_step("cxx.env.format_xml", "GPUIDLE_FORMAT")[1]


@row("GPUIDLE_LAUNCH_GAP_MAX_US=0 (LD_PRELOAD): refused at start, not at exit")
def _():
    s = Step("cxx.env.launch_gap_zero").ran()
    failed = [l for l in s.gpuidle_lines() if "analysis failed" in l]
    if failed:
        raise Fail(f"accepted at start, then {short(failed[0], 120)} (no report)")
    return "program unharmed; " + settings_step("cxx.env.launch_gap_zero",
                                                "GPUIDLE_LAUNCH_GAP_MAX_US")[1]


@row("GPUIDLE_SKIP_STEPS=1000 with no steps (LD_PRELOAD): a whole report and one warning")
def _():
    s, w = settings_step("cxx.env.skip_steps_too_many", report=True)
    if "warm-up steps not left out" not in w:
        raise Fail(f"expected the warm-up warning; gpuidle said: {short(s.gpuidle_lines())}")
    return f"program unharmed; report with {kernels(the_report(s))} kernels; {w}"


@row("GPUIDLE_CUPTI_PATH missing (LD_PRELOAD): one warning naming it")
def _():
    s = Step("cxx.env.cupti_path_missing").ran()
    if not s.warnings() and the_report(s) is not None:
        raise Fail(f"no warning: the system's CUPTI was used instead "
                   f"(report with {kernels(the_report(s))} kernels)")
    return "program unharmed; " + settings_step("cxx.env.cupti_path_missing",
                                                "GPUIDLE_CUPTI_PATH")[1]


@row("libcupti of another kind (GPUIDLE_CUPTI_PATH=libz, LD_PRELOAD)")
def _():
    return "program unharmed; " + settings_step("cxx.env.cupti_path_not_cupti", "CUPTI")[1]


@row("GPUIDLE_BENCH_LEAVE_OUT=bogus (LD_PRELOAD): ignored outside a probe build")
def _():
    # A product build never reads the benchmark's variables (lib/collect/collector_probes.h):
    # the program is profiled as usual and nothing names the variable.
    ref = Step("cxx.reference").ran()
    s = Step("cxx.env.bench_junk").ran()
    if s.code != ref.code or s.out != ref.out:
        raise Fail(f"{s.name}: exit {s.code}, output {short(s.out, 80)!r}; without gpuidle: "
                   f"exit {ref.code}, {short(ref.out, 80)!r}")
    if any("GPUIDLE_BENCH_LEAVE_OUT" in line for line in s.gpuidle_lines()):
        raise Fail(f"a product build read GPUIDLE_BENCH_LEAVE_OUT: {short(s.gpuidle_lines())}")
    if s.warnings():
        raise Fail(f"{s.name}: warned: {short(s.warnings())}")
    if the_report(s) is None:
        raise Fail(f"{s.name}: no report")
    return "program unharmed, profiled as usual, the variable never read"


@row("GPUIDLE_LIBRARY names a file that is no library (gpuidle run): exit 5, program not run")
def _():
    s = Step("cxx.run.library_not_elf").ran()
    if s.code == 5 and "GPUIDLE_LIBRARY" in s.err and not s.out:
        return "refused with exit 5"
    ref = Step("cxx.reference").ran()
    if s.code == 0 and s.out == ref.out:
        raise Fail(f"accepted: the program ran unharmed, the driver did not load it "
                   f"(gpuidle lines: {short(s.gpuidle_lines()) or 'none'})")
    raise Fail(f"the program was harmed: exit {s.code}, output {short(s.out, 80)!r}")


CXX_EXIT_CODES = {"normal": 0, "exit": 3, "_exit": 4, "throw": 134, "sigterm": 143, "sigint": 130,
                  "sighup": 129, "sigquit": 131}
for _kind, _code in CXX_EXIT_CODES.items():
    for _way, _label in (("run", "gpuidle run"), ("preload", "LD_PRELOAD")):
        @row(f"exit {_kind} (C++, {_label}): report written or marked incomplete")
        def _check(kind=_kind, code=_code, way=_way):
            s = Step(f"cxx.exit.{kind}.{way}").ran()
            s.expect_code(code)
            s.expect_out(rf"exit {kind}: launched 100 kernels, device counted 100")
            if kind == "_exit" and s.reports().get("report.json") is None:
                # C's _exit runs no code of anyone's: the documented limit (docs/INJECTION.md,
                # "How a job ends"); the periodic summary is what a long job keeps.
                raise Skip(f"exit {code}; no report: _exit runs no exit handler (documented)")
            return f"exit {code}; " + report_or_word(s, 100)


for _suffix, _label in (("", "SIGTERM sent to gpuidle run (forwarded)"),
                        (".group", "SIGTERM sent to gpuidle run's process group")):
    @row(f"{_label}: report written or marked incomplete")
    def _check(suffix=_suffix):
        s = Step(f"cxx.exit.forwarded_sigterm{suffix}.run").ran()
        s.expect_out("ready")
        s.expect_code(143)
        return "exit 143; " + report_or_word(s, 100)


PY_EXIT_CODES = {"normal": 0, "sys_exit": 3, "os_exit": 4, "raise": 1, "sigterm": 143,
                 "sigint": 130}
for _kind, _code in PY_EXIT_CODES.items():
    for _way, _label in (("run", "gpuidle run"), ("profile", "gpuidle.profile()")):
        @row(f"exit {_kind} (PyTorch, {_label}): report written or marked incomplete")
        def _check(kind=_kind, code=_code, way=_way):
            s = Step(f"py.exit.{kind}.{way}").ran()
            s.expect_code(code)
            s.expect_out(rf"torch_faults exit {kind}: 200 kernels, value 200")
            return f"exit {code}; " + report_or_word(s, 200)


def all_kernels(step, launched):
    """The report holds every kernel, or says how many records it lost."""
    report = the_report(step)
    if report is None:
        raise Fail(f"{step.name}: no report; gpuidle said: {short(step.gpuidle_lines())}")
    k, c = kernels(report), completeness(report)
    lost = int(c.get("dropped_records") or 0)
    if k > launched:
        raise Fail(f"{step.name}: {k} kernels in the report, {launched} launched (counted twice?)")
    if k == launched:
        return report, f"all {k} kernels"
    if lost > 0 and c.get("status") == "records_lost" and k + lost >= launched:
        return report, f"{k} of {launched} kernels, {lost} records lost and reported"
    raise Fail(f"{step.name}: {k} of {launched} kernels, {lost} records reported lost "
               f"({c.get('status')}): a silent loss")


for _what, _mode, _launched in (("8 host threads launching at once", "threads", 40000),
                                ("cudaDeviceReset mid-run", "reset", 4000),
                                ("CUDA graphs (200 nodes x 50 launches)", "graph", 10000)):
    for _way, _label in (("run", "gpuidle run"), ("preload", "LD_PRELOAD")):
        @row(f"{_what} ({_label})")
        def _check(mode=_mode, launched=_launched, way=_way):
            s = Step(f"cxx.{mode}.{way}").ran()
            s.expect_code(0)
            s.expect_out(rf"launched {launched} kernels, device counted {launched}")
            return "program unharmed; " + all_kernels(s, launched)[1]


@row("activity buffers exhausted (--buffer-mb 1): drops counted and reported, never idle")
def _():
    launched = 8 * 25000 + 1000 * 200
    base = Step("cxx.tiny_buffers.baseline").ran()
    tiny = Step("cxx.tiny_buffers.run").ran()
    for s in (base, tiny):
        s.expect_code(0)
        s.expect_out(rf"launched {launched} kernels, device counted {launched}")
    _, base_detail = all_kernels(base, launched)
    report, detail = all_kernels(tiny, launched)
    lost = int(completeness(report).get("dropped_records") or 0)
    idle = lambda r: sum(int(d.get("idle_ns", 0)) for d in r.get("devices", []))
    if lost == 0:
        raise Skip(f"exhaustion not forced: no record lost at 1 MiB ({detail}); baseline: "
                   f"{base_detail}")
    if not re.search(r"records lost", tiny.err):
        raise Fail(f"{lost} records lost, but the summary does not say so")
    return (f"{detail}; the summary says so; idle {idle(report) / 1e6:.1f} ms vs "
            f"{idle(the_report(base)) / 1e6:.1f} ms with 64 MiB (lost time is counted as idle "
            f"today: docs/RELIABILITY.md)")


@row("record limit reached (--max-records 5000): the report says so")
def _():
    s = Step("cxx.record_limit.run").ran()
    s.expect_code(0)
    report = the_report(s)
    if report is None:
        raise Fail(f"no report; gpuidle said: {short(s.gpuidle_lines())}")
    if not completeness(report).get("record_limit_reached"):
        raise Fail("record_limit_reached is false")
    if "record limit" not in s.err:
        raise Fail("the summary does not mention the record limit")
    return f"record_limit_reached, {kernels(report)} kernels kept"


for _way, _label in (("run", "gpuidle run"), ("preload", "LD_PRELOAD")):
    @row(f"fork() without exec (C++, {_label}): only the parent writes a report")
    def _check(way=_way):
        s = Step(f"cxx.fork_noexec.{way}").ran()
        s.expect_code(0)
        parent = s.expect_out(r"parent pid (\d+), child pid \d+ exited with 0").group(1)
        names = sorted(s.reports())
        if names != [f"report.{parent}.json"]:
            raise Fail(f"report files {names}, expected only report.{parent}.json")
        return f"one report, the parent's ({kernels(s.reports()[names[0]] or {})} kernels)"

    @row(f"fork() and exec (C++, {_label}): both write, neither replaces the other")
    def _check(way=_way):
        s = Step(f"cxx.fork_exec.{way}").ran()
        s.expect_code(0)
        s.expect_out(r"parent pid \d+, child pid (\d+) exited with 0")
        reports = s.reports()
        if len(reports) != 2 or "report.json" not in reports:
            raise Fail(f"report files {sorted(reports)}, expected report.json and one with a pid")
        bad = [n for n, r in reports.items() if r is None or kernels(r) < 100]
        if bad:
            raise Fail(f"{bad}: not a report with 100 kernels")
        return f"two reports: {', '.join(sorted(reports))}"


for _order in ("first", "after"):
    @row(f"another CUPTI client {'before' if _order == 'first' else 'after'} gpuidle (C++): "
         f"neither loses records silently")
    def _check(order=_order):
        s = Step(f"cxx.cupti_client_{order}.run").ran()
        s.expect_code(0)
        s.expect_out(r"launched 200 kernels, device counted 200")
        theirs = int(s.expect_out(r"cupti client counted (\d+) kernels").group(1))
        report = the_report(s)
        ours = kernels(report) if report is not None else None
        warned = [l for l in s.warnings() if re.search(r"CUPTI|another tool", l)]
        want_theirs = 200 if order == "first" else 100
        if theirs < want_theirs and not warned:
            raise Fail(f"the other client got {theirs} of {want_theirs} kernels (gpuidle: "
                       f"{ours} kernels, no warning)")
        if theirs < want_theirs:
            # Issue 28, item 5: a client that registers after gpuidle takes its buffers; what
            # gpuidle can do is say so, once, whatever the report (docs/RELIABILITY.md).
            return (f"the other client got {theirs} of {want_theirs} kernels, and gpuidle said: "
                    f"{short(warned[0], 110)}")
        if ours is not None and ours < 200 and not warned:
            raise Fail(f"gpuidle reported {ours} of 200 kernels without a word "
                       f"(the other client got {theirs})")
        return (f"other client {theirs} kernels; gpuidle "
                f"{'stepped aside: ' + short(warned[0], 90) if warned else f'{ours} kernels'}")


for _order, _total in (("gpuidle-first", 600), ("profiler-first", 400)):
    for _way, _label in (("run", "gpuidle run with its Python layer"),
                         ("nopython", "gpuidle run without it")):
        @row(f"torch.profiler and gpuidle, {_order} ({_label}): neither loses records silently")
        def _check(order=_order, total=_total, way=_way):
            s = Step(f"py.coexist.{order}.{way}").ran()
            s.expect_code(0)
            theirs = int(s.expect_out(r"torch.profiler kernels (\d+) of at least 200").group(1))
            report = the_report(s)
            ours = kernels(report) if report is not None else None
            warned = [l for l in s.warnings() if re.search(r"torch.profiler|CUPTI|another tool", l)]
            if theirs < 200:
                raise Fail(f"torch.profiler got {theirs} of 200 kernels (gpuidle: {ours}, "
                           f"{short(warned) or 'no warning'})")
            if ours is not None and ours < total and not warned:
                raise Fail(f"gpuidle reported {ours} of {total} kernels without a word "
                           f"(torch.profiler got {theirs})")
            return (f"torch.profiler {theirs} kernels; gpuidle "
                    f"{short(warned[0], 90) if warned else f'{ours} kernels'}")


for _way, _label in (("preload", "LD_PRELOAD"), ("run", "gpuidle run")):
    @row(f"DataLoader, 4 forked workers ({_label}): only the parent writes a report")
    def _check(way=_way):
        s = Step(f"py.fork4.{way}").ran()
        s.expect_code(0)
        parent = s.expect_out(r"fork_workers4: 4 forked workers, parent pid (\d+)").group(1)
        names = sorted(s.reports())
        if names != [f"report.{parent}.json"]:
            raise Fail(f"report files {names}, expected only report.{parent}.json")
        return f"one report, the parent's ({kernels(s.reports()[names[0]] or {})} kernels)"


@row("fork() and exec of a CUDA child (PyTorch, LD_PRELOAD): each process its own report")
def _():
    s = Step("py.fork_exec.preload").ran()
    s.expect_code(0)
    parent = s.expect_out(r"parent pid (\d+), child exited with 0").group(1)
    reports = s.reports()
    if len(reports) != 2 or f"report.{parent}.json" not in reports:
        raise Fail(f"report files {sorted(reports)}, expected the parent's and the child's")
    bad = [n for n, r in reports.items() if r is None or kernels(r) < 200]
    if bad:
        raise Fail(f"{bad}: not a report with 200 kernels")
    return f"two reports: {', '.join(sorted(reports))}"


def main():
    counts = {"PASS": 0, "FAIL": 0, "SKIP": 0}
    for name, check in ROWS:
        try:
            verdict, detail = "PASS", check()
        except Skip as e:
            verdict, detail = "SKIP", str(e)
        except Fail as e:
            verdict, detail = "FAIL", str(e)
        except Exception as e:  # a bug here must not hide the other rows
            verdict, detail = "FAIL", f"the checker failed: {type(e).__name__}: {e}"
        counts[verdict] += 1
        print(f"{verdict} {name}: {detail}")
    print(f"faults: {counts['PASS']} passed, {counts['FAIL']} failed, {counts['SKIP']} skipped "
          f"({len(ROWS)} rows)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
