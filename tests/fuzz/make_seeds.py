#!/usr/bin/env python3
"""Writes the seed inputs of the fuzzers (tests/fuzz/seeds/<fuzzer>/): small cuts of the real
traces in tests/data/traces, and hand-made inputs that once crashed gpuidle or that probe a
limit (issue 13). cmake/ci_fuzz.sh fuzzes from these and from the committed corpus, which
was grown from them and minimized with -merge=1.

Run from the repository root: tests/fuzz/make_seeds.py
"""
import gzip
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DATA = os.path.join(ROOT, "tests", "data", "traces")
OUT = os.path.join(ROOT, "tests", "fuzz", "seeds")


def load(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        return json.loads(f.read())


def cut(trace, per_category=40):
    """The trace with at most `per_category` events of each category, in file order."""
    if isinstance(trace, list):
        trace = {"traceEvents": trace}
    kept, seen = [], {}
    for e in trace.get("traceEvents", []):
        cat = e.get("cat", "") if isinstance(e, dict) else ""
        if seen.get(cat, 0) < per_category:
            seen[cat] = seen.get(cat, 0) + 1
            kept.append(e)
    out = {k: v for k, v in trace.items() if k != "traceEvents"}
    out["traceEvents"] = kept
    return json.dumps(out, separators=(",", ":")).encode()


def write(fuzzer, name, data):
    d = os.path.join(OUT, fuzzer)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def kernel(name=b"k", ts=b"10", dur=b"1", args=b'{"device": 0}', pid=b"0"):
    return (b'{"ph": "X", "cat": "kernel", "name": "' + name + b'", "pid": ' + pid +
            b', "tid": 1, "ts": ' + ts + b', "dur": ' + dur + b', "args": ' + args + b"}")


def trace(*events, top=b""):
    return b"{" + top + b'"traceEvents": [' + b",".join(events) + b"]}"


def report_seeds():
    """report_json_fuzzer: recorded gpuidle JSON reports, one with issue 16's fields added."""
    for folder, name in [("live", "torch_nccl.rank0"), ("live", "healthy"),
                         ("live_python", "item_sync")]:
        with open(os.path.join(DATA, folder, name + ".report.json"), "rb") as f:
            write("report_json_fuzzer", folder + "_" + name + ".json", f.read())
    with open(os.path.join(DATA, "live", "torch_nccl.rank1.report.json")) as f:
        report = json.load(f)
    for d in report["devices"]:
        d["lost_ns"] = d["idle_ns"] + (d["comm_wait_ns"] or 0)
        d["collectives"] = [{"group": "0", "op": "allreduce", "count": 3, "ns": 3000,
                             "exposed_ns": 2000, "bytes": 12288, "wait_ns": 900},
                            {"group": "", "op": "broadcast", "count": 1, "ns": 10,
                             "exposed_ns": 10}]
        d["collectives_not_listed"] = 2
        start = d["steady_start_ns"]
        d["collective_timings"] = {"start_ns": [start, start + 5000, start + 9000],
                                   "duration_ns": [1000, 1000, 10], "seq": [0, 1, -1],
                                   "bytes": [4096, 4096, -1], "kind": [0, 0, 1]}
    for s in report["steps"][:1]:
        s["comm_wait_ns"] = 5
    report["visible_devices"] = [{"rank": 1, "device": 0, "physical_index": 1,
                                  "uuid": "GPU-5e3c", "name": "NVIDIA H200", "used": True}]
    report["ranks"] = [{"rank": r, "host": "node", "pid": 7, "world_size": 2,
                        "wall_clock_offset_ns": None, "clock_offset_ns": -5, "collectives": 3,
                        "matched": 3, "arrived_last": 2 * r, "late_ns": 100 * r, "wait_ns": 900,
                        "own_cause": "data_starved.host", "own_cause_share": 0.75}
                       for r in range(2)]
    report["straggler_rank"] = 1
    report["stragglers"] = [1]
    report["clock"] = {"method": "aligned", "hosts": 2, "residual_ns": 40, "matched_share": 1.0}
    write("report_json_fuzzer", "issue16_fields.json", json.dumps(report, indent=1).encode())


def main():
    report_seeds()
    kineto = {}
    for name in sorted(os.listdir(os.path.join(DATA, "formats"))):
        with open(os.path.join(DATA, "formats", name), "rb") as f:
            kineto["formats_" + name] = f.read()
    for name in ["healthy_matmul.json.gz", "pageable_h2d.json.gz", "nccl_straggler.rank0.json.gz",
                 "dataloader_starved.json.gz"]:
        kineto["torch_" + name[: -len(".json.gz")] + ".json"] = cut(
            load(os.path.join(DATA, "torch", name)), 25)
    # Issue 13's crashers and limits, small: deep nesting, a long name with escapes, invalid
    # UTF-8, time stamps near the int64 limits, device ids beyond int32, other encodings.
    kineto["deep_nesting.json"] = b'{"traceEvents": [], "x": ' + b"[" * 40000
    kineto["long_escaped_name.json"] = trace(kernel(b"a\\tb" * 20000))
    kineto["invalid_utf8.json"] = trace(kernel(b"bad\xff\xc3"), kernel(b"lone\\udc00", b"20"))
    kineto["extreme_times.json"] = trace(kernel(ts=b"9200000000000000", dur=b"9200000000000000"),
                                         kernel(ts=b"-9200000000000000"), kernel(ts=b"11"),
                                         top=b'"baseTimeNanoseconds": 9000000000000000000,')
    kineto["device_ids.json"] = trace(kernel(args=b'{"device": 4294967296}'),
                                      kernel(args=b"{}", pid=b"-1"),
                                      kernel(args=b'{"device": "0x10"}'),
                                      top=b'"distributedInfo": {"rank": 1099511627776},')
    kineto["utf16.json"] = trace(kernel()).decode().encode("utf-16")
    kineto["bom.json"] = b"\xef\xbb\xbf" + trace(kernel())
    kineto["long_fraction.json"] = trace(kernel(ts=b"0." + b"7" * 3000))
    for name, data in kineto.items():
        write("kineto_json_fuzzer", name, data)
        if not name.startswith(("utf16", "bom", "deep")):
            write("analyze_fuzzer", name, data)

    gz = {name + ".gz": gzip.compress(data, 9) for name, data in kineto.items()
          if name.startswith("torch_")}
    gz["deep_nesting.json.gz"] = gzip.compress(b'{"x":' + b"[" * 100000, 9)  # the 294-byte crasher
    gz["big_name.json.gz"] = gzip.compress(trace(kernel(b"n" * (4 << 20))), 9)
    gz["two_members.json.gz"] = gzip.compress(b'{"traceEvents": [', 9) + gzip.compress(
        kernel() + b"]}", 9)
    gz["xz_magic.json.xz"] = b"\xfd7zXZ\x00" + b"\x00" * 20
    gz["plain.json"] = kineto["formats_rocm.json"]
    for name, data in gz.items():
        write("gzip_fuzzer", name, data)

    for folder in ["live", "live_python"]:
        for name in sorted(os.listdir(os.path.join(DATA, folder))):
            if name.endswith(".trace.json.gz") and not name.startswith(("mixed", "tiny_kernels")):
                write("gpuidle_trace_fuzzer", folder + "_" + name[: -len(".trace.json.gz")] + ".json",
                      cut(load(os.path.join(DATA, folder, name)), 15))
    write("gpuidle_trace_fuzzer", "formats_rocm.json", kineto["formats_rocm.json"])

    options = {
        "variable_out": b"\x00\x00report.%p.json",
        "variable_buffer": b"\x00\x05-1",
        "variable_unknown": b"\x00\xffGPUIDLE_NOPE\x00x",
        "variables_all": b"\x01" + b"\x00".join([b"o.json", b"json", b"t.json", b"yes", b"100",
                                                 b"64", b"1000", b"100", b"loader", b"50", b"1",
                                                 b"5", b"0"]),
        "disable": b"\x02 TRUE ",
        "analyze_json": b"\x03--format\x00json\x00t.json",
        "analyze_out": b"\x03--out\x00r.json\x00--max-gaps\x003\x00t.json\x00u.json",
        "analyze_options": b"\x03--launch-gap-max-us\x00500\x00--skip-steps\x001\x00--data-range"
                           b"\x00Step\x00--quiet\x00t.json",
        "analyze_bad": b"\x03--max-gaps\x00-5\x00t.json",
    }
    for name, data in options.items():
        write("options_fuzzer", name, data)


if __name__ == "__main__":
    sys.exit(main())
