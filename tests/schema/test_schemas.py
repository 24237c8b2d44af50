"""The JSON Schema files of docs/schema against what gpuidle writes, and against their docs.

Every JSON output is checked against the schema its own first key names ("schema":
"gpuidle.report/2" -> report.v2.schema.json, "gpuidle": {"format": "gpuidle.trace/2"} ->
trace.v2.schema.json): the reports and traces recorded in tests/data, fresh reports of
`gpuidle analyze --format json` over every recorded trace, merged ranks, fresh gpuidle traces
(write_gpuidle_trace) and the Python package's Report.to_json(). Broken documents must fail
(the negative tests), and every property of a schema must be documented in its doc and every
documented field be in the schema. CTest runs this (tests/schema/CMakeLists.txt); by hand:

    GPUIDLE_CLI=build/bin/gpuidle GPUIDLE_WRITE_TRACE=build/bin/write_gpuidle_trace \
      PYTHONPATH=build/python /usr/bin/python3 -m pytest -q tests/schema
"""

from __future__ import annotations

import copy
import gzip
import json
import os
import re
import subprocess
from functools import lru_cache
from pathlib import Path

import jsonschema
import pytest
from jsonschema import Draft202012Validator, ValidationError

SOURCE_DIR = Path(os.environ.get("GPUIDLE_SOURCE_DIR", Path(__file__).resolve().parents[2]))
SCHEMA_DIR = SOURCE_DIR / "docs" / "schema"
DATA_DIR = Path(os.environ.get("GPUIDLE_TEST_DATA_DIR", SOURCE_DIR / "tests" / "data"))


def load_json(path: Path):
    opener = gzip.open if path.name.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        return json.load(f)


def tool(variable: str) -> str:
    path = os.environ.get(variable, "")
    if not os.access(path, os.X_OK):
        pytest.skip(f"{variable} does not name an executable ({path!r}); CTest sets it")
    return path


def run(*args: str) -> str:
    proc = subprocess.run(args, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, f"{' '.join(args)}: exit {proc.returncode}\n{proc.stderr}"
    return proc.stdout


# --- the schemas ------------------------------------------------------------------------------

SCHEMAS = {p.name: load_json(p) for p in sorted(SCHEMA_DIR.glob("*.schema.json"))}
BY_ID = {s["$id"]: s for s in SCHEMAS.values()}


def _strict_integer(_checker, instance) -> bool:
    # jsonschema takes 1.0 for an integer; gpuidle's writers write integers as integers, and a
    # reader that parses "1.0" gets a float.
    return isinstance(instance, int) and not isinstance(instance, bool)


Validator = jsonschema.validators.extend(
    Draft202012Validator,
    type_checker=Draft202012Validator.TYPE_CHECKER.redefine("integer", _strict_integer))


def _always_written(validator, names, instance, schema):
    if not validator.is_type(instance, "object"):
        return
    for name in names:
        if name not in instance:
            yield ValidationError(f"{name!r} is missing: this gpuidle always writes it")


# For what this very build wrote: also the fields that only reports of an earlier gpuidle of the
# same version may lack (x-gpuidle-always-written, docs/REPORT_SCHEMA.md "Schema files").
FreshValidator = jsonschema.validators.extend(
    Validator, validators={"x-gpuidle-always-written": _always_written})


def schema_name_of(doc) -> str:
    """The schema file for a document, from the version it names itself."""
    if isinstance(doc, dict) and isinstance(doc.get("schema"), str):
        name = doc["schema"]
    elif isinstance(doc, dict) and isinstance(doc.get("gpuidle"), dict):
        name = doc["gpuidle"].get("format", "")
    else:
        raise AssertionError("neither a report (\"schema\") nor a gpuidle trace (\"gpuidle\")")
    match = re.fullmatch(r"gpuidle\.([a-z_]+)/([0-9]+)", name)
    assert match, f"unversioned document {name!r}"
    return f"{match[1]}.v{match[2]}.schema.json"


@lru_cache(maxsize=None)
def validator(schema_file: str, fresh: bool):
    assert schema_file in SCHEMAS, f"no schema file docs/schema/{schema_file}"
    schema = SCHEMAS[schema_file]
    resolver = jsonschema.RefResolver.from_schema(schema, store=BY_ID)
    return (FreshValidator if fresh else Validator)(schema, resolver=resolver)


def errors(doc, fresh: bool = False, schema_file: str | None = None) -> list[ValidationError]:
    return list(validator(schema_file or schema_name_of(doc), fresh).iter_errors(doc))


def describe(errs: list[ValidationError]) -> str:
    return "\n".join(f"  at {'/'.join(map(str, e.absolute_path)) or '(top)'}: {e.message[:300]}"
                     for e in errs[:10])


def assert_valid(doc, what: str, fresh: bool = False) -> None:
    errs = errors(doc, fresh)
    assert not errs, f"{what}: {len(errs)} errors against {schema_name_of(doc)}:\n{describe(errs)}"


# A trace has up to hundreds of thousands of events, and jsonschema checks a few thousand a
# second: beyond this many, an event is checked if it is the first of its shape (phase,
# category, metadata name, its keys and its args' keys) or falls on an even stride.
MAX_EVENTS_CHECKED = 2000


def events_checked(events: list) -> list[int]:
    if len(events) <= MAX_EVENTS_CHECKED:
        return list(range(len(events)))
    stride = len(events) // (MAX_EVENTS_CHECKED // 2)
    seen, chosen = set(), []
    for i, e in enumerate(events):
        if not isinstance(e, dict):
            chosen.append(i)
            continue
        args = e.get("args")
        shape = (e.get("ph"), e.get("cat"), e.get("name") if e.get("ph") == "M" else None,
                 tuple(sorted(e)), tuple(sorted(args)) if isinstance(args, dict) else None)
        if shape not in seen or i % stride == 0:
            seen.add(shape)
            chosen.append(i)
    return chosen


def assert_valid_trace(doc, what: str) -> None:
    events = doc["traceEvents"]
    chosen = events_checked(events)
    errs = errors(dict(doc, traceEvents=[events[i] for i in chosen]))
    for e in errs:  # name the events by their index in the file
        path = list(e.absolute_path)
        if path[:1] == ["traceEvents"] and len(path) > 1:
            e.path[1] = chosen[path[1]]
    assert not errs, (f"{what}: {len(errs)} errors against {schema_name_of(doc)} "
                      f"({len(chosen)} of {len(events)} events checked):\n{describe(errs)}")


def test_every_schema_file_is_a_json_schema_named_by_its_version():
    assert {"report.v2.schema.json", "trace.v2.schema.json"} <= set(SCHEMAS)
    for name, schema in SCHEMAS.items():
        Validator.check_schema(schema)
        kind, version = re.fullmatch(r"([a-z_]+)\.v([0-9]+)\.schema\.json", name).groups()
        assert schema["$id"] == f"https://gpuidle.invalid/schema/{name}", name
        # The version the documents carry: "schema" of a report, gpuidle.format of a trace.
        props = schema["properties"]
        pinned = props["schema"] if "schema" in props else props["gpuidle"]["properties"]["format"]
        assert pinned == {"const": f"gpuidle.{kind}/{version}"}, name
        for doc in schema["x-gpuidle-documented-in"]:
            assert (SOURCE_DIR / doc).is_file(), f"{name}: {doc} does not exist"


# --- recorded outputs -------------------------------------------------------------------------

RECORDED_REPORTS = sorted(DATA_DIR.rglob("*.report.json")) + sorted(
    DATA_DIR.rglob("*.summary.json.gz"))
RECORDED_GPUIDLE_TRACES = sorted(DATA_DIR.rglob("*.trace.json.gz"))
# Everything `gpuidle analyze` reads: PyTorch profiler traces and gpuidle traces.
TRACES = sorted(p for p in DATA_DIR.rglob("*.json*")
                if not p.name.endswith((".report.json", ".summary.json.gz")))


def rel(path: Path) -> str:
    return str(path.relative_to(DATA_DIR))


@pytest.mark.parametrize("path", RECORDED_REPORTS, ids=rel)
def test_recorded_report_matches_the_schema(path):
    assert_valid(load_json(path), rel(path))


@pytest.mark.parametrize("path", RECORDED_GPUIDLE_TRACES, ids=rel)
def test_recorded_gpuidle_trace_matches_the_schema_of_its_format(path):
    assert_valid_trace(load_json(path), rel(path))


def test_the_recorded_data_covers_the_outputs():
    assert len(RECORDED_REPORTS) >= 20 and len(RECORDED_GPUIDLE_TRACES) >= 20
    formats = {load_json(p)["gpuidle"]["format"] for p in RECORDED_GPUIDLE_TRACES}
    assert formats == {"gpuidle.trace/1", "gpuidle.trace/2"}


# --- fresh outputs ----------------------------------------------------------------------------


@lru_cache(maxsize=None)
def analyze_json(*paths: Path) -> dict:
    return json.loads(run(tool("GPUIDLE_CLI"), "analyze", "--format", "json", *map(str, paths)))


@pytest.mark.parametrize("path", TRACES, ids=rel)
def test_fresh_report_of_a_recorded_trace_matches_the_schema(path):
    assert_valid(analyze_json(path), f"gpuidle analyze {rel(path)}", fresh=True)


MERGES = {
    "live traces of two ranks": ["traces/live/torch_nccl.rank0.trace.json.gz",
                                 "traces/live/torch_nccl.rank1.trace.json.gz"],
    "PyTorch traces of two ranks": ["traces/torch/nccl_straggler.rank0.json.gz",
                                    "traces/torch/nccl_straggler.rank1.json.gz"],
    "reports of two ranks": ["traces/live/torch_nccl.rank0.report.json",
                             "traces/live/torch_nccl.rank1.report.json"],
}


@pytest.mark.parametrize("name", MERGES)
def test_merged_report_of_ranks_matches_the_schema(name):
    report = analyze_json(*(DATA_DIR / p for p in MERGES[name]))
    assert [r["rank"] for r in report["ranks"]] == [0, 1], "not a merge of two ranks"
    assert_valid(report, name, fresh=True)


def test_fresh_reports_cover_the_optional_parts_of_the_schema():
    """So that the checks above reach them: ranks, clock, collectives, steps, advice."""
    merged = analyze_json(*(DATA_DIR / p for p in MERGES["PyTorch traces of two ranks"]))
    assert "clock" in merged and merged["devices"][0]["collectives"]
    assert any("wait_ns" in c for d in merged["devices"] for c in d["collectives"])
    reports = [analyze_json(p) for p in TRACES]
    assert any(r["steps"] and r["advice"] and r["offenders"] for r in reports)
    assert any(r["devices"] and r["devices"][0]["phases"]["start_up"]["parts"] for r in reports)
    assert any("visible_devices" in r for r in reports)


def test_the_report_in_an_html_page_matches_the_schema():
    """The page carries the report as JSON (docs/HTML_REPORT.md), its collective timings left out."""
    trace = DATA_DIR / "traces" / "torch" / "nccl_straggler.rank0.json.gz"
    page = run(tool("GPUIDLE_CLI"), "analyze", "--format", "html", str(trace))
    embedded = re.search(r'<script type="application/json" class="gpuidle-data">(.*?)</script>',
                         page, re.S)
    assert embedded, "no report in the page"
    report = json.loads(embedded[1])
    assert report["devices"][0]["collectives"], "a report without collectives checks less"
    assert_valid(report, "the report in the HTML page", fresh=True)


@lru_cache(maxsize=None)
def written_trace(path: Path) -> dict:
    return json.loads(run(tool("GPUIDLE_WRITE_TRACE"), str(path)))


@pytest.mark.parametrize("path", TRACES, ids=rel)
def test_freshly_written_gpuidle_trace_matches_the_schema(path):
    assert_valid_trace(written_trace(path), f"write_gpuidle_trace {rel(path)}")


def test_written_traces_hold_every_kind_of_event():
    categories = {e.get("cat", e["ph"]) for p in TRACES for e in written_trace(p)["traceEvents"]}
    assert {"M", "kernel", "gpu_memcpy", "cuda_runtime", "user_annotation", "cpu_op",
            "gpuidle_host_sample", "gpuidle_gap"} <= categories


# Pairs of runs as `gpuidle diff` takes them (a set of ranks each side of "--").
DIFFS = {
    "a fix of a data-starved loop": ["traces/torch/dataloader_starved.json.gz",
                                     "traces/torch/healthy_matmul.json.gz"],
    "a trace and its own report": ["traces/live/mixed.trace.json.gz",
                                   "traces/live/mixed.report.json"],
    "ranks against ranks": ["traces/live/torch_nccl.rank0.trace.json.gz",
                            "traces/live/torch_nccl.rank1.trace.json.gz", "--",
                            "traces/torch/nccl_straggler.rank0.json.gz",
                            "traces/torch/nccl_straggler.rank1.json.gz"],
    "one GPU against another": ["traces/live/healthy.trace.json.gz",
                                "traces/torch/one_of_two_gpus.json.gz"],
    "ROCm against CUDA": ["traces/formats/rocm.json", "traces/live/tiny_kernels.report.json"],
    "two ranks against one process": ["traces/live/torch_nccl.rank0.trace.json.gz",
                                      "traces/live/torch_nccl.rank1.trace.json.gz", "--",
                                      "traces/live/healthy.trace.json.gz"],
}


@lru_cache(maxsize=None)
def diff_json(name: str) -> dict:
    args = [a if a == "--" else str(DATA_DIR / a) for a in DIFFS[name]]
    return json.loads(run(tool("GPUIDLE_CLI"), "diff", "--format", "json", *args))


@pytest.mark.parametrize("name", DIFFS)
def test_fresh_diff_matches_the_schema(name):
    assert_valid(diff_json(name), f"gpuidle diff: {name}", fresh=True)


def test_fresh_diffs_cover_the_optional_parts_of_the_schema():
    diffs = [diff_json(name) for name in DIFFS]
    assert {d["unit"] for d in diffs} == {"per_step", "per_second"}
    assert any(d["caveats"] for d in diffs) and any(d["advice"] for d in diffs)
    assert any(d["devices"] for d in diffs) and any(d["only_before"] for d in diffs)
    assert any(d["only_after"] for d in diffs) and any(d["steady"]["mean_step_ns"] for d in diffs)


def test_a_broken_diff_is_rejected():
    diff = diff_json("a fix of a data-starved loop")
    assert not errors(diff)
    for path, value in [(("steady", "ns", "before"), "1"), (("unit",), "per_fortnight"),
                        (("verdict", "outcome"), "better"), (("advice", 0, "cause"), "nap"),
                        (("caveats", 0, "code"), "mood"), (("steady", "busy_share", "after"), 2.0),
                        (("lost_by_subcause", "data_starved.coffee"), diff["steady"]["ns"])]:
        assert errors(mutated(diff, path, value), schema_file="diff.v1.schema.json"), path
    assert errors(mutated(diff, ("verdict", "text"), delete=True))


def test_python_reports_to_json_matches_the_schema():
    gpuidle = pytest.importorskip("gpuidle", reason="the Python package is not built")
    report = gpuidle.analyze(str(DATA_DIR / "traces" / "torch" / "mixed_resnet.json.gz"))
    assert_valid(json.loads(report.to_json()), "Report.to_json()", fresh=True)
    merged = gpuidle.merge_reports([str(DATA_DIR / p) for p in MERGES["reports of two ranks"]])
    assert_valid(json.loads(merged.to_json()), "merge_reports(...).to_json()", fresh=True)


# --- the checks can fail ----------------------------------------------------------------------


def mutated(doc, path: tuple, value=None, delete: bool = False):
    out = copy.deepcopy(doc)
    node = out
    for key in path[:-1]:
        node = node[key]
    if delete:
        del node[path[-1]]
    elif isinstance(node, list) and path[-1] == len(node):
        node.append(value)
    else:
        node[path[-1]] = value
    return out


REPORT = "report.v2.schema.json"  # what a broken report is checked with


def a_rich_report() -> dict:
    report = analyze_json(DATA_DIR / "traces" / "torch" / "mixed_resnet.json.gz")
    assert report["longest_gaps"] and report["advice"] and report["steps"]
    return report


def other_cause(gap) -> str:
    return next(c for c in ("data_starved", "launch_bound", "sync_bound") if c != gap["cause"])


REPORT_BREAKAGES = {
    "a number as a string": (("devices", 0, "busy_ns"), "1000"),
    "an integer written as 1.0": (("devices", 0, "busy_ns"), 1.0),
    "an unknown cause": (("longest_gaps", 0, "cause"), "gpu_bored"),
    "an unknown subcause": (("offenders", 0, "subcause"), "data_starved.coffee"),
    "an unknown subcause key": (("devices", 0, "idle_by_subcause", "data_starved.coffee"), 1),
    "an unknown field": (("devices", 0, "idle_ms"), 5),
    "another version": (("schema",), "gpuidle.report/3"),
    "an unknown status": (("completeness", "status"), "partial"),
    "a share above 1": (("advice", 0, "share_of_lost_time"), 1.5),
    "a negative time": (("devices", 0, "idle_by_cause", "sync_bound"), -1),
    "an unknown phase part": (("devices", 0, "phases", "wind_down", "parts", 0, "kind"), "nap"),
    "null where a number must be": (("devices", 0, "kernel_count"), None),
}


@pytest.mark.parametrize("breakage", REPORT_BREAKAGES)
def test_a_broken_report_is_rejected_where_it_is_broken(breakage):
    path, value = REPORT_BREAKAGES[breakage]
    report = a_rich_report()
    assert not errors(report)
    errs = errors(mutated(report, path, value), schema_file=REPORT)
    assert errs, f"{breakage} at {path} passed"
    assert any(tuple(e.absolute_path)[:len(path) - 1] == path[:-1] for e in errs), describe(errs)


@pytest.mark.parametrize("field", [("devices", 0, "idle_ns"), ("window",), ("advice", 0, "fix"),
                                   ("devices", 0, "phases", "steady", "one_off_ns")])
def test_a_report_without_a_required_field_is_rejected(field):
    errs = errors(mutated(a_rich_report(), field, delete=True))
    assert any(f"'{field[-1]}' is a required property" in e.message for e in errs), describe(errs)


def test_a_gap_whose_subcause_is_not_of_its_cause_is_rejected():
    report = a_rich_report()
    gap = report["longest_gaps"][0]
    assert errors(mutated(report, ("longest_gaps", 0, "cause"), other_cause(gap)))


def test_a_field_added_within_the_version_is_optional_for_old_reports_only():
    report = mutated(a_rich_report(), ("devices", 0, "lost_ns"), delete=True)
    assert not errors(report), "a report of an earlier gpuidle may lack lost_ns"
    errs = errors(report, fresh=True)
    assert [e.message for e in errs] == ["'lost_ns' is missing: this gpuidle always writes it"]


def a_written_trace() -> dict:
    return written_trace(DATA_DIR / "traces" / "live_python" / "dataloader_starved.trace.json.gz")


def first_event(trace, cat: str) -> int:
    return next(i for i, e in enumerate(trace["traceEvents"]) if e.get("cat") == cat)


def test_a_broken_trace_is_rejected():
    trace = a_written_trace()
    assert not errors(trace)
    kernel, sample = first_event(trace, "kernel"), first_event(trace, "gpuidle_host_sample")
    gap = first_event(trace, "gpuidle_gap")
    breakages = {
        "an unknown category": (("traceEvents", kernel, "cat"), "gpu_bored"),
        "ts as a string": (("traceEvents", kernel, "ts"), "21.000"),
        "a negative duration": (("traceEvents", kernel, "dur"), -1.0),
        "an unknown arg": (("traceEvents", kernel, "args", "colour"), "red"),
        "a sample with a duration": (("traceEvents", sample, "dur"), 1.0),
        "a gap of no cause": (("traceEvents", gap, "name"), "sleepy"),
        "an unknown top-level key": (("extra",), 1),
        "another format": (("gpuidle", "format"), "gpuidle.trace/9"),
    }
    for name, (path, value) in breakages.items():
        assert errors(mutated(trace, path, value), schema_file="trace.v2.schema.json"), name
    missing = mutated(trace, ("traceEvents", kernel, "args", "device"), delete=True)
    assert errors(missing), "a kernel without its device"


def test_a_format_1_trace_has_no_host_samples():
    trace = a_written_trace()
    old = mutated(trace, ("gpuidle", "format"), "gpuidle.trace/1")
    assert errors(old), "a gpuidle.trace/1 file with host samples"
    old["traceEvents"] = [e for e in old["traceEvents"] if e.get("cat") != "gpuidle_host_sample"]
    assert not errors(old)


# --- the docs ---------------------------------------------------------------------------------


def property_names(node) -> set[str]:
    """Every property name a schema declares, at any depth."""
    names = set()
    if isinstance(node, dict):
        if isinstance(node.get("properties"), dict):
            names |= set(node["properties"])
        for value in node.values():
            names |= property_names(value)
    elif isinstance(node, list):
        for value in node:
            names |= property_names(value)
    return names


def values(node) -> set[str]:
    """Every string a schema allows by const or enum (causes, kinds, ...)."""
    out = set()
    if isinstance(node, dict):
        for key in ("const", "enum"):
            allowed = node.get(key)
            out |= {v for v in (allowed if isinstance(allowed, list) else [allowed])
                    if isinstance(v, str)}
        for value in node.values():
            out |= values(value)
    elif isinstance(node, list):
        for value in node:
            out |= values(value)
    return out


def doc_text(doc: str) -> str:
    """The doc without its fenced code blocks (an example is no documentation of a field)."""
    text = (SOURCE_DIR / doc).read_text(encoding="utf-8")
    return re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)


def schemas_of(doc: str) -> list[dict]:
    return [s for s in SCHEMAS.values() if doc in s["x-gpuidle-documented-in"]]


DOCS = sorted({d for s in SCHEMAS.values() for d in s["x-gpuidle-documented-in"]})


def quoted_in_docs(schema) -> set[str]:
    """What the schema's docs quote: `name`, the names in `a.b[].c` and in a formula
    (`start_ns + i * bin_ns`), the strings of `"s": "t"`."""
    text = "\n".join(doc_text(d) for d in schema["x-gpuidle-documented-in"])
    quoted = set()
    for token in re.findall(r"`([^`]+)`", text):  # inline code may wrap lines
        quoted |= {token, *re.findall(r'"([^"]*)"', token)}
        for name in re.findall(r"[A-Za-z_][A-Za-z0-9_.]*", token):
            quoted |= {name, *name.split(".")}
    return quoted


@pytest.mark.parametrize("name", SCHEMAS)
def test_every_property_of_a_schema_is_documented(name):
    schema = SCHEMAS[name]
    missing = sorted(property_names(schema) - quoted_in_docs(schema))
    assert not missing, (f"{name}: properties not documented (as `name`) in "
                         f"{', '.join(schema['x-gpuidle-documented-in'])}: {missing}")


@pytest.mark.parametrize("name", SCHEMAS)
def test_every_value_a_schema_allows_by_name_is_documented(name):
    """Causes, kinds, codes, categories, colours: each is quoted in the docs."""
    schema = SCHEMAS[name]
    missing = sorted(values(schema) - quoted_in_docs(schema))
    assert not missing, (f"{name}: values not documented (as `value` or `\"value\"`) in "
                         f"{', '.join(schema['x-gpuidle-documented-in'])}: {missing}")


# Tables that document fields: their first column names them (`start_ns`, `end_ns`, ...). A
# "kind" (a "code") table lists the values of a kind (a code).
FIELD_TABLE_HEADERS = {"field", "column", "key", "arg", "kind", "code"}


def documented_fields(doc: str) -> set[str]:
    fields, in_field_table = set(), False
    for line in doc_text(doc).splitlines():
        if not line.startswith("|"):
            in_field_table = False
            continue
        first = line.split("|")[1].strip()
        if first.lower() in FIELD_TABLE_HEADERS:
            in_field_table = True
        elif in_field_table and not set(first) <= set("-: "):
            fields |= set(re.findall(r"`([^`]+)`", first))
    return fields


@pytest.mark.parametrize("doc", DOCS)
def test_every_documented_field_is_in_the_schema(doc):
    known = set()
    for schema in schemas_of(doc):
        known |= property_names(schema) | values(schema)
    unknown = sorted(f for f in documented_fields(doc)
                     if f.removesuffix("[]") not in known
                     and not all(part.removesuffix("[]") in known for part in f.split(".")))
    assert documented_fields(doc), f"{doc}: no field tables found"
    assert not unknown, f"{doc}: fields in its tables that no schema of it has: {unknown}"
