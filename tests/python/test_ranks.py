"""Many ranks from Python: the report fields of issue 16 (collectives, waits for peers, the
straggler and its own cause, clocks), gpuidle.merge_reports, and the job's report gathered to
rank 0 through torch.distributed (gpuidle/_distributed.py), with a real two-process gloo job
where torch is installed."""

from __future__ import annotations

import dataclasses
import gzip
import importlib.util
import json
import os
import socket
import subprocess
import sys
import textwrap
import zlib

import pytest

import gpuidle
from gpuidle import _distributed

from conftest import DATA_DIR, PACKAGE_DIR, cli_json, gpuidle_lines, python_env

RANKS = sorted((DATA_DIR / "traces" / "torch").glob("nccl_straggler.rank*.json.gz"))


@pytest.fixture(scope="module")
def job() -> gpuidle.Report:
    return gpuidle.analyze([str(p) for p in RANKS])


@pytest.fixture(scope="module")
def rank_reports() -> list[gpuidle.Report]:
    return [gpuidle.analyze(p) for p in RANKS]


def _figures(report: gpuidle.Report) -> dict:
    """The report's JSON without its inputs (their names differ between the ways in)."""
    d = report.to_dict()
    d.pop("inputs")
    return d


# --- the fields -----------------------------------------------------------------------------------

def test_the_committed_job_names_rank_1_the_straggler_with_its_own_cause(job):
    assert len(RANKS) == 2
    assert job.straggler_rank == 1 and job.stragglers[0] == 1
    late = job.straggler
    assert late is not None and late is job.rank(1) and late.rank == 1
    assert late.own_cause is not None and late.own_cause.startswith("data_starved.")
    assert 0.5 < late.own_cause_share <= 1
    # It started last at most of the matched collectives, and by far more than the other rank.
    punctual = job.rank(0)
    assert late.matched > 0 and late.arrived_last > late.matched / 2
    assert late.late_ns > 10 * punctual.late_ns
    assert late.mean_late_ns == pytest.approx(late.late_ns / late.arrived_last)
    assert late.mean_late_ns > 1e6  # milliseconds, not jitter
    assert [r.rank for r in job.ranks] == [0, 1]
    assert all(r.world_size == 2 and r.collectives >= r.matched for r in job.ranks)
    assert job.clock is not None and job.clock.method in ("one clock", "aligned")
    assert 0 < job.clock.matched_share <= 1
    assert "straggler rank 1" in repr(job) and '"straggler_rank":1' in job._repr_html_()


def test_the_punctual_rank_mostly_waited_for_its_peer(job):
    by_rank = {d.rank: d for d in job.devices}
    d0 = by_rank[0]
    assert d0.comm_ns > 0 and d0.comm_wait_ns >= 0.8 * d0.comm_ns
    assert d0.comm_wait_share == pytest.approx(d0.comm_wait_ns / d0.comm_ns)
    # Waiting is lost time, though busy by the definition of utilisation.
    assert d0.lost_ns == d0.idle_ns + d0.comm_wait_ns
    assert d0.lost_share > 0.5 > d0.idle_share
    assert job.lost_ns == sum(d.lost_ns for d in job.devices) > job.idle_ns
    assert d0.compute_ns == d0.busy_ns - d0.exposed_comm_ns
    # The collectives by kind carry the waits, and sum to the device's communication.
    assert d0.collectives and all(isinstance(c, gpuidle.CollectiveStats) for c in d0.collectives)
    assert sum(c.count for c in d0.collectives) > 0
    assert sum(c.ns for c in d0.collectives) == d0.comm_ns
    assert sum(c.wait_ns for c in d0.collectives) == d0.comm_wait_ns
    top = d0.collectives[0]
    assert top.op and top.wait_share >= 0.8
    assert top.bytes is None or top.bytes > 0
    assert job.rank(0).wait_ns == d0.comm_wait_ns
    # The steps carry their waits; they lie within the device's.
    steps0 = [s for s in job.steps if s.rank == 0]
    assert steps0 and all(s.comm_wait_ns is not None for s in steps0)
    assert 0 < sum(s.comm_wait_ns for s in steps0) <= d0.comm_wait_ns


def test_one_rank_alone_has_no_waits_and_no_straggler(rank_reports):
    alone = rank_reports[0]
    assert alone.straggler_rank is None and alone.stragglers == [] and alone.straggler is None
    assert alone.clock is None
    d = alone.devices[0]
    assert d.comm_wait_ns is None and d.comm_wait_share is None and d.lost_ns == d.idle_ns
    assert d.collectives and all(c.wait_ns is None and c.wait_share is None
                                 for c in d.collectives)
    assert all(s.comm_wait_ns is None for s in alone.steps)
    assert [r.rank for r in alone.ranks] == [0] and alone.ranks[0].late_ns == 0


def test_visible_devices_are_plain_values(job):
    assert job.visible_devices
    for v in job.visible_devices:
        assert isinstance(v, gpuidle.VisibleDevice) and isinstance(v.used, bool)
        assert v.uuid == "" or v.uuid.startswith("GPU-")
    assert [dataclasses.asdict(v) for v in job.visible_devices] == job.to_dict()["visible_devices"]


def test_the_collective_timing_table_is_not_kept_in_python(job):
    # It is for the merge: in the JSON, not among the device's fields...
    full = job.to_dict()
    rows = full["devices"][0]["collective_timings"]
    listed = len(rows["start_ns"]) + job.devices[0].collectives_not_listed
    assert listed >= sum(c.count for c in job.devices[0].collectives) > 0  # start-up's too
    assert not hasattr(job.devices[0], "collective_timings")
    # ... and the Python Report is built from the JSON without the tables (the rest the same).
    summary = json.loads(job._native.summary_json())
    for d in summary["devices"]:
        assert all(column == [] for column in d["collective_timings"].values())
    for d in full["devices"]:
        d["collective_timings"] = {k: [] for k in d["collective_timings"]}
    assert summary == full
    assert job.to_dict()["devices"][0]["collective_timings"] == rows  # the native one keeps them


# --- merge_reports --------------------------------------------------------------------------------

def test_merging_rank_reports_equals_analysing_the_traces_together(job, rank_reports):
    merged = gpuidle.merge_reports(rank_reports)
    assert _figures(merged) == _figures(job)
    assert merged.straggler_rank == 1
    assert merged.inputs == [str(p) for p in RANKS]  # a Report of one trace is named by it


def test_merge_reports_takes_json_texts_and_files(job, rank_reports, tmp_path):
    texts = [r.to_json() for r in rank_reports]
    assert _figures(gpuidle.merge_reports(texts)) == _figures(job)
    plain = tmp_path / "report.0.json"
    plain.write_text(texts[0])
    packed = tmp_path / "report.1.json.gz"
    packed.write_bytes(gzip.compress(texts[1].encode()))
    from_files = gpuidle.merge_reports([plain, str(packed)])
    assert _figures(from_files) == _figures(job)
    assert from_files.inputs == [str(plain), str(packed)]
    # The same as the command line's merge of the report files.
    cli = cli_json(str(plain), str(packed))
    assert _figures(from_files) == {k: v for k, v in cli.items() if k != "inputs"}


def test_merge_reports_errors_are_python_exceptions(rank_reports, tmp_path):
    with pytest.raises(ValueError, match="no report"):
        gpuidle.merge_reports([])
    with pytest.raises(FileNotFoundError):
        gpuidle.merge_reports([tmp_path / "missing.json"])
    with pytest.raises(TypeError):
        gpuidle.merge_reports([42])  # type: ignore[list-item]
    # One path, text or report where a list belongs (issue 29: a str's characters were each taken
    # for a report): said so.
    for one in (str(tmp_path / "r.json"), tmp_path / "r.json", rank_reports[0].to_json(),
                rank_reports[0]):
        with pytest.raises(TypeError, match=r"list of reports"):
            gpuidle.merge_reports(one)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="report 1"):  # names the bad one
        gpuidle.merge_reports([rank_reports[0].to_json(), '{"schema": "something else"}'])
    not_json = tmp_path / "notes.json"
    not_json.write_text("not JSON at all")
    with pytest.raises(ValueError, match="notes.json"):
        gpuidle.merge_reports([not_json])
    cut = tmp_path / "cut.json"
    cut.write_text(rank_reports[0].to_json()[:-200])
    for items in ([cut], [rank_reports[1], cut]):  # files alone, and beside a Report
        with pytest.raises(ValueError, match="cut.json"):
            gpuidle.merge_reports(items)


# --- merge_reports reads files with the native reader (lib/ingest), the one that `gpuidle analyze`
# uses: gzip, the size limit and the messages are its own, never a copy in Python ----------------

def test_report_files_are_merged_as_the_command_line_merges_them(rank_reports, tmp_path):
    plain = tmp_path / "report.0.json"
    plain.write_text(rank_reports[0].to_json())
    packed = tmp_path / "report.1.json.gz"
    packed.write_bytes(gzip.compress(rank_reports[1].to_json().encode()))
    merged = gpuidle.merge_reports([str(plain), packed])
    assert merged.to_dict() == cli_json(str(plain), str(packed))  # warnings and inputs too
    # Beside a Report, a file is read by the same reader, and the figures stay the same.
    mixed = gpuidle.merge_reports([rank_reports[0], packed])
    assert _figures(mixed) == _figures(merged)
    assert mixed.inputs == [str(RANKS[0]), str(packed)]


def test_a_trace_among_the_files_is_analysed_as_its_rank(job, rank_reports, tmp_path):
    # As `gpuidle analyze report.0.json trace.1.json.gz` does.
    plain = tmp_path / "report.0.json"
    plain.write_text(rank_reports[0].to_json())
    assert _figures(gpuidle.merge_reports([plain, RANKS[1]])) == _figures(job)
    assert _figures(gpuidle.merge_reports([rank_reports[0], RANKS[1]])) == _figures(job)


def test_a_cut_gzip_report_is_the_readers_data_loss(rank_reports, tmp_path):
    # What analyze() raises for a cut trace, naming the file (Python's gzip module raised
    # EOFError with neither).
    packed = gzip.compress(rank_reports[0].to_json().encode())
    cut = tmp_path / "cut.json.gz"
    cut.write_bytes(packed[:len(packed) // 2])
    for items in ([cut], [rank_reports[1], cut]):
        with pytest.raises(gpuidle.GpuidleError, match=r"cut\.json\.gz: truncated gzip") as info:
            gpuidle.merge_reports(items)
        assert info.value.code == "DATA_LOSS"


def _gzip_of_spaces(path, head: bytes, inflated: int) -> None:
    """A small gzip file that inflates to `head` and then spaces up to `inflated` bytes."""
    chunk = b" " * (1 << 20)
    packer = zlib.compressobj(1, zlib.DEFLATED, 31)  # 31: the gzip container
    with open(path, "wb") as f:
        f.write(packer.compress(head))
        for _ in range((inflated - len(head)) // len(chunk) + 1):
            f.write(packer.compress(chunk))
        f.write(packer.flush())


def test_a_report_beyond_the_readers_limit_is_refused_while_read(tmp_path):
    # 257 MiB of a report once inflated, about 1 MB on disk: refused at the native reader's limit
    # (ingest/report_reader.h kMaxReportBytes) as it reads.
    bomb = tmp_path / "bomb.json.gz"
    _gzip_of_spaces(bomb, b'{"schema": "gpuidle.report/2", ', 257 << 20)
    assert bomb.stat().st_size < 2 << 20
    with pytest.raises(MemoryError, match=r"bomb\.json\.gz: a report longer than 268435456 bytes"):
        gpuidle.merge_reports([bomb])


def test_the_package_reads_no_file_format_itself():
    # Opening, inflating and bounding trace and report files is the native reader's job
    # (lib/ingest/byte_source.h, report_reader.h); a second reader in Python would drift.
    # (_distributed.py's zlib packs the ranks' reports for torch.distributed: no file.)
    for source in sorted(PACKAGE_DIR.rglob("*.py")):
        text = source.read_text()
        for marker in ("import gzip", "gzip.open", "\\x1f\\x8b", "256 << 20"):
            assert marker not in text, f"{source.name}: {marker}"


def test_duplicate_ranks_merge_with_a_warning(rank_reports):
    twice = gpuidle.merge_reports([rank_reports[0], rank_reports[0]])
    assert any("2 inputs claim rank 0" in w for w in twice.warnings), twice.warnings
    assert any("missing: rank 1" in w for w in twice.warnings), twice.warnings


# --- the gather (with a stand-in torch.distributed) -----------------------------------------------

class FakeDist:
    """torch.distributed of one rank of a job whose other ranks' payloads are given."""

    def __init__(self, rank, world, others=None, fail=None):
        self.rank, self.world, self.others, self.fail = rank, world, others or {}, fail
        self.sent = []

    def get_world_size(self):
        return self.world

    def get_rank(self):
        return self.rank

    def _everyone(self, payload):
        if self.fail:
            raise RuntimeError(self.fail)
        self.sent.append(payload)
        return [payload if r == self.rank else self.others.get(r) for r in range(self.world)]

    def gather_object(self, obj, object_gather_list=None, dst=0):
        everyone = self._everyone(obj)
        if self.rank == dst:
            object_gather_list[:] = everyone
        else:
            assert object_gather_list is None


class OldFakeDist(FakeDist):
    """A torch older than gather_object (1.7): all_gather_object only."""

    @property
    def gather_object(self):  # hasattr() is then False
        raise AttributeError("gather_object")

    def all_gather_object(self, object_list, obj):
        object_list[:] = self._everyone(obj)


def _payload(report: gpuidle.Report) -> bytes:
    return zlib.compress(report.to_json().encode())


def test_rank_0_merges_what_the_gather_brings(job, rank_reports):
    dist = FakeDist(0, 2, others={1: _payload(rank_reports[1])})
    merged = _distributed.gather_job_report(rank_reports[0], dist=dist)
    assert merged is not None and _figures(merged) == _figures(job)
    assert merged.inputs == ["rank 0", "rank 1"]
    assert json.loads(zlib.decompress(dist.sent[0]))["devices"] == rank_reports[0].to_dict()["devices"]


def test_other_ranks_send_and_get_none(rank_reports):
    dist = FakeDist(1, 2, others={0: _payload(rank_reports[0])})
    assert _distributed.gather_job_report(rank_reports[1], dist=dist) is None
    assert len(dist.sent) == 1 and dist.sent[0] is not None


def test_old_torch_without_gather_object_uses_all_gather_object(job, rank_reports):
    dist = OldFakeDist(0, 2, others={1: _payload(rank_reports[1])})
    assert not hasattr(dist, "gather_object")
    merged = _distributed.gather_job_report(rank_reports[0], dist=dist)
    assert merged is not None and merged.straggler_rank == 1


def test_a_rank_without_a_report_still_takes_part(rank_reports, capsys):
    dist = FakeDist(0, 3, others={1: _payload(rank_reports[1])})  # rank 2 sends None
    merged = _distributed.gather_job_report(rank_reports[0], dist=dist)
    assert merged is not None and [r.rank for r in merged.ranks] == [0, 1]
    lines = gpuidle_lines(capsys.readouterr().err)
    assert len(lines) == 1 and "rank 2 had no report" in lines[0]
    # A rank with nothing to send sends None, not nothing (the others wait for it).
    quiet = FakeDist(1, 2)
    assert _distributed.gather_job_report(None, dist=quiet) is None and quiet.sent == [None]


def test_a_failed_gather_is_one_warning_and_no_job_report(rank_reports, capsys):
    dist = FakeDist(0, 2, fail="Connection closed by peer")
    assert _distributed.gather_job_report(rank_reports[0], dist=dist) is None
    lines = gpuidle_lines(capsys.readouterr().err)
    assert len(lines) == 1 and "Connection closed by peer" in lines[0] and "warning" in lines[0]
    # A payload that is not a report: the merge fails on rank 0, also one warning.
    bad = FakeDist(0, 2, others={1: zlib.compress(b'{"schema": "nope"}')})
    assert _distributed.gather_job_report(rank_reports[0], dist=bad) is None
    lines = gpuidle_lines(capsys.readouterr().err)
    assert len(lines) == 1 and "not gathered" in lines[0] and "rank 1" in lines[0]


def test_one_rank_or_no_process_group_gathers_nothing(rank_reports, capsys):
    single = FakeDist(0, 1)
    assert _distributed.gather_job_report(rank_reports[0], dist=single) is None
    assert single.sent == []
    if "torch" not in sys.modules:  # no torch imported here: no process group
        assert _distributed.gather_job_report(rank_reports[0]) is None
        assert _distributed.job_size() == 0
    assert gpuidle_lines(capsys.readouterr().err) == []


def test_profile_merge_ranks_without_a_job_is_just_a_profile(capsys):
    with gpuidle.profile(quiet=True, merge_ranks=True) as p:
        pass
    assert p.job_report is None
    assert not any("job" in line for line in gpuidle_lines(capsys.readouterr().err))
    with pytest.raises(TypeError):
        gpuidle.profile(merge_ranks="yes")  # type: ignore[arg-type]


def test_profile_gathers_once_per_start_and_not_at_exit(monkeypatch, rank_reports):
    calls = []
    monkeypatch.setattr(_distributed, "job_size", lambda: 2)
    monkeypatch.setattr(_distributed, "gather_job_report",
                        lambda report: calls.append(report) or rank_reports[0])
    p = gpuidle.profile(quiet=True, merge_ranks=True)
    with p:
        p.stop()  # stopped inside the block: the block's end gathers no second time
        assert p.job_report is rank_reports[0]
    assert calls == [p.report]
    with p:  # a second collection gathers again
        pass
    assert len(calls) == 2
    p.start()  # a profile the interpreter's exit stops gathers nothing
    p._stop(at_exit=True)
    assert len(calls) == 2 and p.job_report is None
    q = gpuidle.profile(quiet=True)  # merge_ranks off: never
    with q:
        pass
    assert len(calls) == 2 and q.job_report is None


# --- a real torch.distributed job (gloo, two processes) -------------------------------------------

_RANK_PROGRAM = textwrap.dedent("""
    import datetime, json, sys
    try:
        import torch
        import torch.distributed as dist
    except ImportError:
        sys.exit(77)
    if not dist.is_available() or not dist.is_gloo_available():
        sys.exit(77)
    import gpuidle
    from gpuidle import _distributed

    rank, trace = int(sys.argv[1]), sys.argv[2]
    dist.init_process_group("gloo", rank=rank, world_size=2,
                            timeout=datetime.timedelta(seconds=60))
    # No GPU here, so a live profile is inert: each rank gives the gather the report of its
    # own recorded trace.
    job = _distributed.gather_job_report(gpuidle.analyze(trace))
    # profile(merge_ranks=True) gathers too, even when neither rank collected anything.
    with gpuidle.profile(quiet=True, merge_ranks=True) as p:
        pass
    dist.barrier()  # both left the profile block: its gather did not hang either rank
    out = {"rank": rank, "job": None if job is None else job.to_dict(),
           "profile_job_report": None if p.job_report is None else "set"}
    dist.destroy_process_group()
    print("RESULT " + json.dumps(out))
""")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_a_real_gloo_job_gathers_the_job_report_to_rank_0(job, tmp_path):
    if importlib.util.find_spec("torch") is None:
        pytest.skip("torch is not installed")
    env = python_env(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(_free_port()),
                     GLOO_SOCKET_IFNAME="lo")
    program = tmp_path / "rank.py"
    program.write_text(_RANK_PROGRAM)
    procs = [subprocess.Popen([sys.executable, str(program), str(r), str(RANKS[r])], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for r in range(2)]
    results = []
    try:
        for proc in procs:
            out, err = proc.communicate(timeout=180)
            results.append((proc.returncode, out, err))
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    if any(code == 77 for code, _, _ in results):
        pytest.skip("torch.distributed (gloo) is not available")
    for code, out, err in results:
        assert code == 0, err
    got = [json.loads(next(line[7:] for line in out.splitlines() if line.startswith("RESULT ")))
           for _, out, _ in results]
    assert [g["rank"] for g in got] == [0, 1]
    assert got[1]["job"] is None  # only rank 0 gets the job's report
    merged = got[0]["job"]
    assert merged is not None and merged["straggler_rank"] == 1
    merged.pop("inputs")
    assert merged == _figures(job)
    own = next(r for r in merged["ranks"] if r["rank"] == 1)["own_cause"]
    assert own.startswith("data_starved.")
    # Neither rank collected (no GPU): no job report, and no error from the profile's gather.
    assert got[0]["profile_job_report"] is None and got[1]["profile_job_report"] is None
    assert "no rank had a report" in results[0][2] and "no rank had" not in results[1][2]
    for _, _, err in results:
        assert "Traceback" not in err
