"""gpuidle.analyze() against the CLI on the committed traces, the Report's Python values, its
outputs, and the mapping of errors to Python exceptions."""

from __future__ import annotations

import dataclasses
import gzip

import json
import os
import stat
import sys

import pytest

import gpuidle
# The phase names: gpuidle.PHASES once the package exports them.
from gpuidle._report import ONE_OFF_KINDS, PHASES

from conftest import DATA_DIR, LIVE_TRACES, TORCH_TRACES, cli_json, run, run_cli, python_env

SINGLE_TRACES = [t for t in TORCH_TRACES + LIVE_TRACES if "nccl_straggler" not in t.name]
RANKS = sorted((DATA_DIR / "traces" / "torch").glob("nccl_straggler.rank*.json.gz"))


def test_every_committed_trace_is_there():
    assert len(TORCH_TRACES) >= 9 and len(LIVE_TRACES) >= 10 and len(RANKS) == 2


def check_against_cli(report: gpuidle.Report, cli: dict) -> None:
    assert report.source == cli["source"]
    assert report.inputs == cli["inputs"]
    assert (report.window_start_ns, report.window_end_ns) == (
        cli["window"]["start_ns"], cli["window"]["end_ns"])
    assert report.completeness == cli["completeness"]["status"]
    assert report.dropped_records == cli["completeness"]["dropped_records"]
    assert report.zero_timestamp_records == cli["completeness"]["zero_timestamp_records"]
    assert report.record_limit_reached == cli["completeness"]["record_limit_reached"]
    assert report.visible_device_count == cli["visible_device_count"]
    assert report.unused_devices == cli["unused_devices"]
    assert report.step_source == cli["step_source"]
    assert report.warnings == cli["warnings"]
    assert len(report.devices) == len(cli["devices"])
    for d, want in zip(report.devices, cli["devices"]):
        got = dataclasses.asdict(d)
        phases = want["phases"]
        assert got.pop("one_off") == [
            {"phase": p, **part} for p in PHASES for part in phases[p]["parts"]]
        assert got.pop("start_up_ns") == phases["start_up"]["ns"]
        assert got.pop("wind_down_ns") == phases["wind_down"]["ns"]
        assert d.steady_ns == phases["steady"]["ns"]
        assert d.steady_one_off_ns == phases["steady"]["one_off_ns"]
        # bytes and wait_ns are in the JSON only where known (None in Python otherwise).
        assert got.pop("collectives") == [
            {"bytes": None, "wait_ns": None, **c} for c in want["collectives"]]
        assert d.lost_ns == d.idle_ns + (d.comm_wait_ns or 0)
        assert got.pop("gpu_metrics") == want.get("gpu_metrics")
        # A serving process's demand is in the JSON only for one (None and 0 in Python otherwise).
        assert got.pop("demand_ns") == want.get("demand_ns")
        assert got.pop("demand_busy_ns") == want.get("demand_busy_ns", 0)
        # The timeline's readings per bin are in the JSON only where there are some.
        want = {**want, "timeline": dict(want["timeline"])}
        assert got["timeline"].pop("gpu") == want["timeline"].pop("gpu", None)
        # ... and a serving process's requests in flight, only for one.
        assert got["timeline"].pop("in_flight_ns") == want["timeline"].pop("in_flight_ns", None)
        assert got == {k: want[k] for k in got}
    # A step's comm_wait_ns is in the JSON only after a merge of ranks.
    assert [s.comm_wait_ns for s in report.steps] == [s.get("comm_wait_ns") for s in cli["steps"]]
    for values, expected in ((report.steps, cli["steps"]),
                             (report.longest_gaps, cli["longest_gaps"]),
                             (report.offenders, cli["offenders"]), (report.advice, cli["advice"])):
        assert len(values) == len(expected)
        for value, want in zip(values, expected):
            got = dataclasses.asdict(value)
            got.pop("comm_wait_ns", None)
            # A step's readings are in the JSON only for a live capture that took some.
            assert got.pop("gpu", None) == want.get("gpu")
            # Serving advice's prediction is in the JSON only for requests_waiting.
            for key in ("batch", "predicted_requests_per_s", "predicted_latency_ns"):
                assert got.pop(key, None) == want.get(key)
            assert got == {k: want[k] for k in got}
    assert [dataclasses.asdict(v) for v in report.visible_devices] == cli.get("visible_devices", [])
    assert [dataclasses.asdict(r) for r in report.ranks] == cli.get("ranks", [])
    assert report.straggler_rank == cli["straggler_rank"]
    assert report.stragglers == cli["stragglers"]
    clock = cli.get("clock")
    assert (dataclasses.asdict(report.clock) if report.clock else None) == (
        clock if clock and clock["method"] else None)
    assert report.options == cli["options"]
    assert (dataclasses.asdict(report.verdict) if report.verdict else None) == cli.get("verdict")


def check_invariants(report: gpuidle.Report) -> None:
    assert report.devices
    for d in report.devices:
        # The headline is the steady state's; start-up and wind-down are around it.
        assert d.busy_ns + d.idle_ns + d.steady_one_off_ns == d.steady_ns
        assert d.start_up_ns + d.steady_ns + d.wind_down_ns == d.window_ns
        for phase in ("start_up", "wind_down"):  # their parts tile them
            parts = d.one_off_in(phase)
            assert not parts or sum(o.ns for o in parts) == getattr(d, phase + "_ns")
        assert all(o.phase in PHASES and o.kind in ONE_OFF_KINDS for o in d.one_off)
        assert sum(d.idle_by_subcause.values()) == d.idle_ns
        assert sum(d.idle_by_cause.values()) == d.idle_ns
        assert set(d.idle_by_cause) == set(gpuidle.CAUSES)
        assert set(d.idle_by_subcause) == set(gpuidle.SUBCAUSES)
        if d.idle_ns:
            assert sum(d.cause_shares.values()) == pytest.approx(1.0)
            assert sum(d.subcause_shares.values()) == pytest.approx(1.0)
            assert d.idle_by_subcause[d.dominant] == max(d.idle_by_subcause.values())
        assert d.busy_share + d.idle_share + d.steady_one_off_ns / d.steady_ns == pytest.approx(1.0)
    assert report.idle_ns == sum(report.idle_by_cause.values())
    for s in report.steps:
        assert s.busy_ns + s.idle_ns == s.duration_ns
    assert all(a.duration_ns >= b.duration_ns
               for a, b in zip(report.longest_gaps, report.longest_gaps[1:]))


@pytest.mark.parametrize("trace", SINGLE_TRACES, ids=lambda p: p.name)
def test_analyze_agrees_with_the_cli(trace):
    report = gpuidle.analyze(trace)
    check_against_cli(report, cli_json(str(trace)))
    check_invariants(report)
    assert report.to_dict() == json.loads(report.to_json())


def test_ranks_of_one_job_are_analysed_together():
    report = gpuidle.analyze([str(p) for p in RANKS])
    check_against_cli(report, cli_json(*map(str, RANKS)))
    check_invariants(report)
    assert sorted(d.rank for d in report.devices) == [0, 1]
    assert all(d.comm_wait_ns is not None for d in report.devices)
    assert [d.label for d in report.devices][0].startswith("rank ")
    # The late rank's peer spent most of its collective waiting (busy time, not idle).
    waits = {d.rank: d.comm_wait_ns for d in report.devices}
    assert waits[0] > 0.9 * report.devices[0].comm_ns > 0 and waits[0] > waits[1]


def test_options_change_the_analysis_as_the_cli_flags_do():
    trace = str(next(t for t in TORCH_TRACES if t.name.startswith("tiny_mlp")))
    default = gpuidle.analyze(trace)
    tight = gpuidle.analyze(trace, launch_gap_max_us=20, max_gaps=3, data_ranges="my_loader")
    check_against_cli(tight, cli_json("--launch-gap-max-us", "20", "--max-gaps", "3",
                                      "--data-range", "my_loader", trace))
    assert len(tight.longest_gaps) == 3
    assert tight.options["launch_gap_max_ns"] == 20_000
    assert "my_loader" in tight.options["data_range_patterns"]
    assert (tight.devices[0].idle_by_subcause["data_starved.host"] >
            default.devices[0].idle_by_subcause["data_starved.host"])


def test_warm_up_steps_are_left_out_as_the_cli_flag_does():
    trace = str(DATA_DIR / "traces" / "live_python" / "item_sync.trace.json.gz")
    whole = gpuidle.analyze(trace)
    warm = gpuidle.analyze(trace, skip_steps=1)
    check_against_cli(warm, cli_json("--skip-steps", "1", trace))
    assert warm.options["skip_steps"] == 1 and "skip_steps" not in whole.options
    assert len(warm.steps) == len(whole.steps) - 1
    assert warm.devices[0].subcause_shares["sync_bound.host_sync"] >= 0.90
    with pytest.raises(gpuidle.GpuidleError, match="skipping 99 leaves none"):
        gpuidle.analyze(trace, skip_steps=99)


def test_summary_is_the_cli_text():
    trace = str(TORCH_TRACES[0])
    proc = run_cli("analyze", trace)
    assert proc.returncode == 0
    report = gpuidle.analyze(trace)
    assert report.summary() == proc.stdout == str(report)
    assert report.format("text") == report.summary()


def test_python_m_gpuidle_analyze_prints_what_the_cli_prints():
    traces = [str(t) for t in TORCH_TRACES[:2]]
    for args in (["analyze", *traces], ["analyze", "--format", "json", *traces],
                 ["analyze", "--max-gaps", "2", "--format", "json", *traces]):
        ours = run([sys.executable, "-m", "gpuidle", *args], env=python_env())
        theirs = run_cli(*args)
        assert ours.returncode == theirs.returncode == 0
        assert ours.stdout == theirs.stdout and ours.stdout
        assert ours.stderr == theirs.stderr


# --- errors -------------------------------------------------------------------------------------

def test_missing_file_is_file_not_found(tmp_path):
    missing = tmp_path / "nope.json"
    with pytest.raises(FileNotFoundError, match="nope.json"):
        gpuidle.analyze(missing)


def test_not_json_is_a_value_error_naming_file_and_problem(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("hello")
    with pytest.raises(ValueError, match=r"bad\.json: not JSON"):
        gpuidle.analyze(bad)
    wrong = tmp_path / "wrong.json"
    wrong.write_text('{"traceEvents": 5}')
    with pytest.raises(ValueError, match=r'"traceEvents" must be an array'):
        gpuidle.analyze(wrong)


def test_deeply_nested_json_is_an_error_not_a_dead_interpreter(tmp_path):
    deep = tmp_path / "deep.json"
    deep.write_text('{"x":' + "[" * 100000)
    with pytest.raises(ValueError, match="nested deeper than 512 levels"):
        gpuidle.analyze(deep)


def test_truncated_trace_is_a_gpuidle_error_with_its_code(tmp_path):
    truncated = tmp_path / "cut.json.gz"
    truncated.write_bytes(TORCH_TRACES[0].read_bytes()[:5000])
    with pytest.raises(gpuidle.GpuidleError, match=r"cut\.json\.gz: truncated gzip") as info:
        gpuidle.analyze(truncated)
    assert info.value.code == "DATA_LOSS"
    assert isinstance(info.value, RuntimeError)


def test_trace_without_activity_is_a_gpuidle_error(tmp_path):
    empty = tmp_path / "empty.json.gz"
    with gzip.open(empty, "wt") as f:
        f.write('{"traceEvents": []}')
    with pytest.raises(gpuidle.GpuidleError, match="holds no host or GPU activity") as info:
        gpuidle.analyze(empty)
    assert info.value.code == "FAILED_PRECONDITION"


def test_bad_arguments_are_value_or_type_errors():
    trace = TORCH_TRACES[0]
    with pytest.raises(ValueError, match="no trace file"):
        gpuidle.analyze([])
    with pytest.raises(ValueError, match="launch_gap_max_us='-1'"):
        gpuidle.analyze(trace, launch_gap_max_us=-1)
    with pytest.raises(ValueError, match="launch_gap_max_us=.0.: must be a positive number"):
        gpuidle.analyze(trace, launch_gap_max_us=0)
    with pytest.raises(TypeError):
        gpuidle.analyze(trace, max_gaps=1.5)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        gpuidle.analyze([3])  # type: ignore[list-item]
    with pytest.raises(FileNotFoundError):  # bytes name a file as they do for open()
        gpuidle.analyze([b"no-such-trace.json"])
    with pytest.raises(ValueError, match="unknown report format"):
        gpuidle.analyze(trace).format("xml")


def test_a_paths_argument_of_another_type_is_a_type_error_naming_it():
    for bad in (42, 4.2, None, object()):
        with pytest.raises(TypeError, match=r"analyze\(\): paths must be a trace path \(str or "
                           rf"os.PathLike\) or a list of them, not {type(bad).__name__}"):
            gpuidle.analyze(bad)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="paths must be"):
        gpuidle.diff(42, TORCH_TRACES[0])  # type: ignore[arg-type]


# --- inputs: directories of torch.profiler traces, .gz names ----------------------------------------

def test_a_tensorboard_trace_directory_is_one_job_of_each_workers_newest_trace(tmp_path):
    runs = tmp_path / "runs"
    runs.mkdir()
    rank0 = runs / "host_1.1700000000200.pt.trace.json.gz"
    rank1 = runs / "host_2.1700000000100.pt.trace.json.gz"
    rank0.write_bytes(RANKS[0].read_bytes())
    rank1.write_bytes(RANKS[1].read_bytes())
    (runs / "host_1.1700000000050.pt.trace.json.gz").write_bytes(TORCH_TRACES[0].read_bytes())
    report = gpuidle.analyze(runs)
    assert report.inputs == [str(rank0), str(rank1)]
    assert sorted(d.rank for d in report.devices) == [0, 1]
    check_against_cli(report, cli_json(str(runs)))
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(ValueError, match="is a directory with no torch.profiler trace"):
        gpuidle.analyze(empty)


def test_a_gz_name_without_gzip_data_is_said(tmp_path):
    plain = tmp_path / "plain.json.gz"
    plain.write_bytes(gzip.decompress(TORCH_TRACES[0].read_bytes()))
    report = gpuidle.analyze(plain)
    assert any("is not gzip data (it starts like JSON; rename it to plain.json)" in w
               for w in report.warnings)
    cut = tmp_path / "cut.json.gz"
    cut.write_bytes(plain.read_bytes()[:3000])
    with pytest.raises((ValueError, gpuidle.GpuidleError),
                       match=r"cut\.json\.gz is not gzip data \(it starts like JSON"):
        gpuidle.analyze(cut)


# --- merge_reports of traces alone --------------------------------------------------------------

def test_merge_reports_of_traces_alone_says_to_call_analyze(tmp_path):
    with pytest.raises(ValueError, match=r"is a trace, not a gpuidle report: .*gpuidle\.analyze"):
        gpuidle.merge_reports([RANKS[0]])
    with pytest.raises(ValueError, match=r"are traces, not a gpuidle report: .*ranks of one job"):
        gpuidle.merge_reports([str(p) for p in RANKS])
    # A gpuidle trace and a plain one are traces too.
    plain = tmp_path / "t.json"
    plain.write_bytes(gzip.decompress(TORCH_TRACES[0].read_bytes()))
    with pytest.raises(ValueError, match="is a trace"):
        gpuidle.merge_reports([plain])
    live = next(t for t in LIVE_TRACES)
    with pytest.raises(ValueError, match="is a trace"):
        gpuidle.merge_reports([live])
    # Reports merge as before, and a trace beside a report is still its rank.
    report = tmp_path / "r.json"
    report.write_text(gpuidle.analyze(RANKS[0]).to_json())
    merged = gpuidle.merge_reports([report, RANKS[1]])
    assert sorted(d.rank for d in merged.devices) == [0, 1]


# --- saving and showing -------------------------------------------------------------------------

@pytest.fixture(scope="module")
def report():
    return gpuidle.analyze(next(t for t in TORCH_TRACES if t.name.startswith("mixed_resnet")))


def test_save_takes_the_format_from_the_extension(report, tmp_path):
    assert report.save(tmp_path / "r.json") == str(tmp_path / "r.json")
    assert (tmp_path / "r.json").read_text() == report.to_json()
    report.save(tmp_path / "r.txt")
    assert (tmp_path / "r.txt").read_text() == report.summary()
    report.save(tmp_path / "forced.txt", format="json")
    assert json.loads((tmp_path / "forced.txt").read_text())["schema"] == "gpuidle.report/2"
    assert sorted(os.listdir(tmp_path)) == ["forced.txt", "r.json", "r.txt"]  # no temporaries


def test_save_never_replaces_a_file_unless_told(report, tmp_path):
    target = tmp_path / "r.json"
    target.write_text("mine")
    with pytest.raises(FileExistsError, match="overwrite=True"):
        report.save(target)
    assert target.read_text() == "mine"
    link = tmp_path / "link.json"
    link.symlink_to(tmp_path / "elsewhere.json")  # dangling: saving must not create its target
    with pytest.raises(FileExistsError):
        report.save(link)
    assert not (tmp_path / "elsewhere.json").exists()
    assert sorted(os.listdir(tmp_path)) == ["link.json", "r.json"]
    report.save(target, overwrite=True)
    assert target.read_text() == report.to_json()
    with pytest.raises(FileNotFoundError):
        report.save(tmp_path / "missing" / "r.json")


def test_html_is_the_native_page_with_the_report_in_it(report):
    page = report._repr_html_()
    assert page == report.to_html() == report.format("html")
    d = report.devices[0]
    assert json.dumps(d.name)[1:-1] in page  # in the embedded JSON, drawn by the page's script
    for external in ("http://", "https://", "<link", "url("):
        assert external not in page


def test_repr_and_values_are_plain_python(report):
    assert repr(report).startswith("<gpuidle.Report pytorch-profiler: GPU 0 idle 94.")
    d = report.devices[0]
    assert type(d.idle_ns) is int and type(d.cause_shares["data_starved"]) is float
    assert d.dominant == "data_starved.dataloader"
    assert report.complete is None and report.completeness == "unknown"
    live = gpuidle.analyze(LIVE_TRACES[0])
    assert live.source == "gpuidle" and live.complete is True


# --- hostile paths and the output rules ---------------------------------------------------------

def test_a_nul_byte_in_a_path_is_a_value_error_not_another_file(tmp_path):
    a = tmp_path / "a"
    a.write_bytes((DATA_DIR / "traces" / "torch" / "item_sync.json.gz").read_bytes())
    for path in (f"{a}\0junk", os.fsencode(a) + b"\0junk"):
        with pytest.raises(ValueError, match="null byte"):
            gpuidle.analyze(path)


def test_a_file_name_that_is_not_utf8_works_as_with_open(report, tmp_path):
    name = os.path.join(os.fsdecode(tmp_path), os.fsdecode(b"r\xff\xfe.json"))
    assert report.save(name) == name
    assert json.loads(open(name, encoding="utf-8").read())["schema"] == "gpuidle.report/2"
    trace = os.path.join(os.fsdecode(tmp_path), os.fsdecode(b"t\xff.json.gz"))
    with open(trace, "wb") as f:
        f.write((DATA_DIR / "traces" / "torch" / "item_sync.json.gz").read_bytes())
    again = gpuidle.analyze(trace)
    assert again.devices and "\ufffd" in again.to_dict()["inputs"][0]  # valid JSON, bytes replaced
    with pytest.raises(FileNotFoundError) as missing:
        gpuidle.analyze(trace + "-missing")
    assert "missing" in str(missing.value)


def test_save_compresses_a_gz_name_and_never_writes_over_an_input(tmp_path):
    import gzip  # noqa: PLC0415
    trace = tmp_path / "t.json.gz"
    trace.write_bytes((DATA_DIR / "traces" / "torch" / "item_sync.json.gz").read_bytes())
    r = gpuidle.analyze(trace)
    r.save(tmp_path / "r.json.gz")
    assert json.loads(gzip.decompress((tmp_path / "r.json.gz").read_bytes())) == r.to_dict()
    before = trace.read_bytes()
    with pytest.raises(ValueError, match="one of the inputs"):
        r.save(trace, overwrite=True)
    assert trace.read_bytes() == before


def test_save_never_replaces_what_is_not_a_regular_file(report, tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(FileExistsError, match="FIFO"):
        report.save(fifo)
    with pytest.raises(gpuidle.GpuidleError, match="FIFO"):
        report.save(fifo, overwrite=True)
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    read_only = tmp_path / "ro.json"
    read_only.write_text("keep")
    read_only.chmod(0o444)
    with pytest.raises(gpuidle.GpuidleError, match="read-only"):
        report.save(read_only, overwrite=True)
    assert read_only.read_text() == "keep"


def test_a_healthy_run_has_nothing_worth_fixing():
    healthy = gpuidle.analyze(DATA_DIR / "traces" / "torch" / "healthy_matmul.json.gz")
    assert healthy.verdict is not None and not healthy.verdict.worth_fixing
    assert healthy.verdict.lost_share < healthy.verdict.threshold_share == 0.05
    assert healthy.advice == []
    assert "nothing worth fixing here" in healthy.summary()
    sick = gpuidle.analyze(DATA_DIR / "traces" / "torch" / "item_sync.json.gz")
    assert sick.verdict.worth_fixing
    # One denominator: the advice's share of the steady state is its lost time over the steady
    # state, the figure the text prints.
    top = sick.advice[0]
    steady = sum(d.steady_ns for d in sick.devices)
    lost = sum(d.lost_ns for d in sick.devices)
    assert top.share_of_steady_state == pytest.approx(top.share_of_lost_time * lost / steady)
    assert f"({top.share_of_steady_state:.0%} of the steady state" in sick.summary()
