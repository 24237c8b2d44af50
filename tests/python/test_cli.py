"""python -m gpuidle: every verb of the command line, from Python."""

from __future__ import annotations

import json
import os
import sys

import pytest

import gpuidle
from gpuidle._native import _gpuidle

from conftest import gpuidle_lines, no_gpu, python_env, run, run_cli, with_collector


def gpuidle_m(*args: str, **env: str):
    return run([sys.executable, "-m", "gpuidle", *args], env=python_env(**env))


def test_run_passes_output_through():
    proc = gpuidle_m("run", "--", "/bin/echo", "hi")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "hi\n"
    assert len(gpuidle_lines(proc.stderr)) <= 1
    assert gpuidle_lines(proc.stderr) == proc.stderr.splitlines()


def test_run_passes_the_exit_status_through():
    assert gpuidle_m("run", "--", "sh", "-c", "exit 3").returncode == 3
    assert gpuidle_m("run", "--quiet", "sh", "-c", "kill -TERM $$").returncode == 128 + 15
    assert gpuidle_m("run", "--", "/nonexistent/command").returncode == 127


def test_run_injects_the_library_this_package_uses():
    proc = gpuidle_m("run", "--", "sh", "-c", 'printf "%s|%s" "$CUDA_INJECTION64_PATH" '
                     '"$NVTX_INJECTION64_PATH"')
    assert proc.returncode == 0, proc.stderr
    library = _gpuidle.library_path()
    assert proc.stdout == f"{library}|{library}"
    other = gpuidle_m("run", "--", "sh", "-c", 'printf %s "$CUDA_INJECTION64_PATH"',
                      GPUIDLE_LIBRARY="/nonexistent/libgpuidle.so")
    assert other.returncode == 5 and "GPUIDLE_LIBRARY=/nonexistent/libgpuidle.so" in other.stderr


@no_gpu
@with_collector
def test_run_warns_once_without_a_gpu():
    proc = gpuidle_m("run", "--", "sh", "-c", "echo one; echo two")
    assert proc.stdout == "one\ntwo\n"
    assert len(proc.stderr.splitlines()) == 1 and "no NVIDIA GPU" in proc.stderr


def test_run_checks_its_flags_as_the_cli_does():
    ours = gpuidle_m("run", "--buffer-mb", "0", "--", "/bin/true")
    theirs = run_cli("run", "--buffer-mb", "0", "--", "/bin/true")
    assert ours.returncode == theirs.returncode == 2
    assert ours.stderr == theirs.stderr and "--buffer-mb" in ours.stderr


def test_help_version_and_usage_errors():
    help_text = gpuidle_m("help")
    assert help_text.returncode == 0 and help_text.stdout == run_cli("help").stdout
    assert "analyze TRACE" in help_text.stdout and "run [options]" in help_text.stdout
    assert gpuidle_m("version").stdout == f"gpuidle {gpuidle.__version__}\n"
    nothing = gpuidle_m()
    assert nothing.returncode == 2 and "usage: gpuidle" in nothing.stderr
    bogus = gpuidle_m("bogus")
    assert bogus.returncode == 2 and 'unknown command "bogus"' in bogus.stderr
    assert gpuidle_m("analyze").returncode == 2
    missing = gpuidle_m("analyze", "/nonexistent/trace.json")
    assert missing.returncode == 3 and "/nonexistent/trace.json" in missing.stderr


def test_cli_main_in_process_writes_to_the_process_streams(capfd):
    print("before", flush=False)  # Python's buffer comes out first
    assert gpuidle.cli_main(["version"]) == 0
    assert capfd.readouterr().out == f"before\ngpuidle {gpuidle.__version__}\n"
    assert "GPUIDLE_LIBRARY" not in os.environ
    with pytest.raises(TypeError):
        gpuidle.cli_main(["version", 3])  # type: ignore[list-item]


def test_each_command_prints_its_own_help():
    for command in ("analyze", "diff", "run"):
        ours = gpuidle_m(command, "--help")
        assert ours.returncode == 0, ours.stderr
        assert ours.stdout.startswith(f"usage: gpuidle {command} ")
        assert "usage: gpuidle <command>" not in ours.stdout
        assert ours.stdout == run_cli(command, "--help").stdout == run_cli("help", command).stdout


def test_analyze_takes_equals_values_dash_o_and_writes_a_trace(tmp_path):
    from conftest import TORCH_TRACES

    trace = str(next(t for t in TORCH_TRACES if t.name == "item_sync.json.gz"))
    report, perfetto = tmp_path / "r.json", tmp_path / "t.json"
    proc = gpuidle_m("analyze", "--format=json", "-o", str(report), f"--trace={perfetto}", trace)
    assert proc.returncode == 0, proc.stderr
    assert f"trace written to {perfetto}" in proc.stdout
    assert json.loads(report.read_text())["schema"] == "gpuidle.report/2"
    drawn = json.loads(perfetto.read_text())
    assert drawn["gpuidle"]["format"] == "gpuidle.trace/2"
    assert any(e.get("cat") == "gpuidle_gap" for e in drawn["traceEvents"])
    # Never over an existing file without --overwrite.
    again = gpuidle_m("analyze", "--trace", str(perfetto), trace)
    assert again.returncode == 4 and "--overwrite replaces it" in again.stderr
    missing = gpuidle_m("analyze", "-o", str(tmp_path / "out" / "r.json"), trace)
    assert missing.returncode == 4
    assert f"the directory {tmp_path / 'out'}/ does not exist" in missing.stderr
