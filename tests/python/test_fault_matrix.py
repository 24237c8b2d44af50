"""The fault matrix's rows for the Python front ends (docs/RELIABILITY.md).

- Settings: the cases of tests/faults/option_rules.txt (shared with
  tests/faults/option_rules_test.cc) through gpuidle.profile(kw=) and gpuidle.analyze(kw=): the
  same verdict as the environment and the command line, and a refusal is a ValueError or
  TypeError whose message names the keyword, is one line, short and free of control characters.
- Exits: a Python program that ends normally, by sys.exit, os._exit, an uncaught exception,
  SIGTERM or SIGINT keeps its exit status and output through every way in (LD_PRELOAD, gpuidle
  run, python -m gpuidle run, gpuidle.profile()). Without a GPU gpuidle is inert; whether the
  report is written in each case is the GPU part's check (tests/gpu/faults/check_faults.py).
- No GPU: gpuidle.profile() says so in its one warning.

GPUIDLE_FAULT_MATRIX_KNOWN_GAPS=xfail marks the cases gpuidle does not follow yet ("today" in
the table, KNOWN_GAPS here) as expected to fail, strictly: one that passes fails the run.
"""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path
from typing import NamedTuple, Optional

import pytest

import gpuidle
from gpuidle import _options
from gpuidle._native import _gpuidle

from conftest import (TORCH_TRACES, cli_path, gpuidle_lines, no_gpu, python_env, run,
                      with_collector)

TABLE = Path(__file__).resolve().parents[1] / "faults" / "option_rules.txt"
TRACE = next((t for t in TORCH_TRACES if t.name == "healthy_matmul.json.gz"), None)
XFAIL = os.environ.get("GPUIDLE_FAULT_MATRIX_KNOWN_GAPS") == "xfail"
MAX_MESSAGE = 512

# The keywords of gpuidle.profile() and gpuidle.analyze(), by table option (the variable without
# GPUIDLE_), from the option table itself: test_options.py checks the signatures against it.
PROFILE_KEYWORDS = {str(s["variable"])[len("GPUIDLE_"):]: str(s["keyword"])
                    for s in _gpuidle.settings() if "profile" in s["front_ends"]}
ANALYZE_KEYWORDS = {option: keyword for option, keyword in PROFILE_KEYWORDS.items()
                    if keyword in _options.ANALYSIS_KEYWORDS}


class Case(NamedTuple):
    line: int
    option: str
    python: str  # a Python expression
    agreed_ok: bool
    overrides: dict
    today: frozenset

    def ok_in(self, front: str) -> bool:
        return self.overrides.get(front, self.agreed_ok)


def load_cases() -> list[Case]:
    cases = []
    for number, line in enumerate(TABLE.read_text().splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        cols = [c.strip() for c in line.split("|")]
        assert len(cols) == 7, f"option_rules.txt:{number}: {len(cols)} columns"
        option, _value, python, agreed, overrides, today, _why = cols
        if python == "-":
            continue
        pairs = dict(o.split("=") for o in overrides.split(",")) if overrides != "-" else {}
        cases.append(Case(number, option, python, agreed == "ok",
                          {k: v == "ok" for k, v in pairs.items()},
                          frozenset(today.split(",")) if today != "-" else frozenset()))
    return cases


def python_value(expression: str):
    return eval(expression, {"__builtins__": {}, "float": float})  # the table's own literals


def matrix_params(front: str, keywords: dict) -> list:
    params = []
    for case in load_cases():
        if case.option not in keywords:
            continue
        marks = [pytest.mark.xfail(strict=True, reason="known gap (option_rules.txt: today)")] \
            if XFAIL and front in case.today else []
        name = f"{case.line}-{keywords[case.option]}={case.python[:30]}"
        params.append(pytest.param(case, id=name, marks=marks))
    return params


def violation(case: Case, front: str, keyword: str, call) -> Optional[str]:
    """None if calling follows the agreed rule, else what is wrong."""
    try:
        call()
        accepted, error = True, None
    except (ValueError, TypeError) as e:
        accepted, error = False, e
    except gpuidle.GpuidleError as e:
        # The analysis refused the trace, not the value (fewer steps than skip_steps).
        accepted, error = e.code != "INVALID_ARGUMENT", e
    if accepted != case.ok_in(front):
        return ("accepted, the agreed rule refuses it" if accepted
                else f"refused ({str(error)[:160]!r}), the agreed rule accepts it")
    if accepted:
        return None
    message = str(error)
    problems = []
    if keyword not in message:
        problems.append(f"does not name {keyword}")
    if len(message) > MAX_MESSAGE:
        problems.append(f"is {len(message)} characters long")
    if any(ord(c) < 0x20 or ord(c) == 0x7F for c in message):
        problems.append("holds control characters or is more than one line")
    return f"the message {', '.join(problems)}: {message[:120]!r}" if problems else None


@pytest.mark.parametrize("case", matrix_params("profile", PROFILE_KEYWORDS))
def test_profile_keywords_follow_the_agreed_rule(case):
    keyword = PROFILE_KEYWORDS[case.option]
    value = python_value(case.python)
    assert violation(case, "profile", keyword, lambda: gpuidle.profile(**{keyword: value})) is None


@pytest.mark.parametrize("case", matrix_params("py-analyze", ANALYZE_KEYWORDS))
def test_analyze_keywords_follow_the_agreed_rule(case):
    if TRACE is None:
        pytest.skip("healthy_matmul.json.gz is missing")
    keyword = ANALYZE_KEYWORDS[case.option]
    value = python_value(case.python)
    assert violation(case, "py-analyze", keyword,
                     lambda: gpuidle.analyze(TRACE, **{keyword: value})) is None


def test_every_keyword_has_cases_and_every_case_a_keyword():
    options = {c.option for c in load_cases()}
    assert set(PROFILE_KEYWORDS) <= options
    # A case with a Python value whose option no keyword takes would be skipped without a word.
    assert options <= set(PROFILE_KEYWORDS)
    assert set(ANALYZE_KEYWORDS.values()) == set(_options.ANALYSIS_KEYWORDS) and ANALYZE_KEYWORDS


# --- exits ---------------------------------------------------------------------------------------

EXITS_PROGRAM = r"""
import os, signal, sys, time

def end(kind):
    print("exits:", kind, flush=True)
    if kind == "sys_exit":
        sys.exit(3)
    if kind == "os_exit":
        os._exit(4)
    if kind == "raise":
        raise RuntimeError("nobody catches this")
    if kind in ("sigterm", "sigint"):
        os.kill(os.getpid(), signal.SIGTERM if kind == "sigterm" else signal.SIGINT)
        time.sleep(10)

# The same lines run in both modes, so that a traceback reads the same.
import contextlib
mode = sys.argv[2]
scope = __import__("gpuidle").profile(quiet=True) if mode == "profile" else contextlib.nullcontext()
with scope:
    end(sys.argv[1])
"""

EXIT_KINDS = ("normal", "sys_exit", "os_exit", "raise", "sigterm", "sigint")


def returncode_as_shell_sees_it(code: int) -> int:
    return 128 - code if code < 0 else code


def ways_in(script: Path) -> dict:
    library = _gpuidle.library_path()
    return {
        "LD_PRELOAD": ([sys.executable, str(script)], {"LD_PRELOAD": library}, "plain"),
        "gpuidle run": ([cli_path(), "run", "--", sys.executable, str(script)], {}, "plain"),
        "python -m gpuidle run": ([sys.executable, "-m", "gpuidle", "run", "--", sys.executable,
                                   str(script)], {}, "plain"),
        "gpuidle.profile()": ([sys.executable, str(script)], {}, "profile"),
    }


@pytest.mark.parametrize("kind", EXIT_KINDS)
def test_every_way_of_ending_keeps_the_programs_status_and_output(tmp_path, kind):
    script = tmp_path / "exits.py"
    script.write_text(EXITS_PROGRAM)
    if kind == "sigint" and any(rt in os.environ.get("LD_PRELOAD", "") for rt in ("libasan", "libtsan")):
        pytest.skip("Python ignores SIGINT under a preloaded sanitizer runtime (test_interrupt.py)")
    plain = run([sys.executable, str(script), kind, "plain"], env=python_env())
    expected = {"normal": 0, "sys_exit": 3, "os_exit": 4, "raise": 1,
                "sigterm": -signal.SIGTERM, "sigint": -signal.SIGINT}[kind]
    assert plain.returncode == expected, plain.stderr
    for way, (argv, env, mode) in ways_in(script).items():
        proc = run(argv + [kind, mode], env=python_env(**env))
        assert returncode_as_shell_sees_it(proc.returncode) == \
            returncode_as_shell_sees_it(plain.returncode), (way, proc.stderr)
        assert proc.stdout == plain.stdout, way
        own = gpuidle_lines(proc.stderr)
        assert len(own) <= 1, (way, proc.stderr)
        others = [l for l in proc.stderr.splitlines() if not l.startswith("gpuidle:")]
        assert others == plain.stderr.splitlines(), way


# --- no GPU --------------------------------------------------------------------------------------

@no_gpu
@with_collector
@pytest.mark.xfail(XFAIL, strict=True, reason="known gap: the warning says CUPTI_ERROR_UNKNOWN")
def test_without_a_gpu_the_one_warning_says_so():
    proc = run([sys.executable, "-c", "import gpuidle\nwith gpuidle.profile() as p: pass\n"
                "print(p.error)"], env=python_env())
    assert proc.returncode == 0, proc.stderr
    lines = gpuidle_lines(proc.stderr)
    assert len(lines) == 1, proc.stderr
    assert "no NVIDIA GPU" in lines[0]
    assert "no NVIDIA GPU" in proc.stdout
