#!/usr/bin/env python3
"""Checks the two-GPU proof (issue 17) that `tests/gpu/run_on_device.sh two-gpus` ran into DIR:

  run_straggler/    tests/gpu/python/ddp_job.py --straggler under `gpuidle run --out
                    report.rank%r.json --trace trace.rank%r.trace.json`; merged.json (the
                    reports merged by `gpuidle analyze`), merged_traces.json (the traces merged)
  profile_straggler/  the same job under gpuidle.profile(merge_ranks=True): job.json, written by
                    rank 0 from the reports gathered through torch.distributed
  run_healthy/      the job without a straggler, merged.json
  one_of_two/       one process that sees both GPUs and uses one: report.json

One PASS/FAIL/SKIP line per check (SKIP: the machine has one GPU, so the job has one rank); exit
status 1 if a check failed.

  tests/gpu/python/check_two_gpus.py DIR GPUS
"""
import json
import os
import sys

results = []


def check(name, ok, detail=""):
    results.append(ok)
    print(f"{'PASS' if ok else 'FAIL'} {name}{': ' + str(detail) if detail != '' else ''}")


def skip(name, why):
    print(f"SKIP {name}: {why}")


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        check(f"{os.path.basename(os.path.dirname(path))}/{os.path.basename(path)} reads", False, e)
        return None


def device_of(report, rank):
    return next((d for d in report["devices"] if d.get("rank") == rank), None)


def rank_of(report, rank):
    return next((r for r in report.get("ranks", []) if r["rank"] == rank), None)


def wait_share(device):
    return (device.get("comm_wait_ns") or 0) / device["comm_ns"] if device["comm_ns"] else 0.0


def straggler_checks(label, job):
    """Rank 0 waits >= 80% of its NCCL time; rank 1 is the straggler, data-starved on its own."""
    d0 = device_of(job, 0)
    check(f"{label}: rank 0 has a device", d0 is not None)
    if d0 is not None:
        check(f"{label}: rank 0 waits for peers >= 80% of its NCCL time", wait_share(d0) >= 0.8,
              f"{wait_share(d0):.1%} of {d0['comm_ns'] / 1e6:.1f} ms")
    check(f"{label}: rank 1 is named straggler", job.get("straggler_rank") == 1,
          job.get("straggler_rank"))
    r1 = rank_of(job, 1)
    own = (r1 or {}).get("own_cause") or ""
    check(f"{label}: rank 1's own lost time is mostly data-starved",
          own.startswith("data_starved") and (r1 or {}).get("own_cause_share", 0) >= 0.5,
          f"{own} {(r1 or {}).get('own_cause_share', 0):.0%}")


def main(folder, gpus):
    two = gpus >= 2
    run = load(os.path.join(folder, "run_straggler", "merged.json"))
    # One rank has no job to merge: gpuidle.profile() gathers nothing then (by design).
    prof = load(os.path.join(folder, "profile_straggler", "job.json")) if two else None
    if not two:
        check("gpuidle.profile(merge_ranks=True): the rank's own report written",
              os.path.exists(os.path.join(folder, "profile_straggler", "report.rank0.json")))
    healthy = load(os.path.join(folder, "run_healthy", "merged.json"))
    traces = load(os.path.join(folder, "run_straggler", "merged_traces.json"))
    one = load(os.path.join(folder, "one_of_two", "report.json"))
    for label, job in (("gpuidle run", run), ("gpuidle.profile(merge_ranks=True)", prof),
                       ("healthy", healthy)):
        if job is not None:
            check(f"{label}: the job's report lists {gpus} rank(s)",
                  len(job.get("ranks", [])) == min(gpus, 2), len(job.get("ranks", [])))
    if not two:
        for what in ("the straggler job through gpuidle run", "through gpuidle.profile()",
                     "the healthy job", "traces merged like reports", "the unused GPU"):
            skip(what, "needs 2 GPUs (one rank runs no NCCL kernel)")
        return
    if run is not None:
        straggler_checks("gpuidle run", run)
    if prof is not None:
        straggler_checks("gpuidle.profile(merge_ranks=True)", prof)
    if healthy is not None:
        shares = {d["rank"]: wait_share(d) for d in healthy["devices"]}
        check("healthy: little waiting for peers (< 20% of NCCL time on every rank)",
              all(s < 0.2 for s in shares.values()), shares)
        check("healthy: exposed communication shown",
              all(d["exposed_comm_ns"] > 0 for d in healthy["devices"]),
              {d["rank"]: d["exposed_comm_ns"] for d in healthy["devices"]})
        check("healthy: no straggler", healthy.get("straggler_rank") is None,
              healthy.get("straggler_rank"))
    if run is not None and traces is not None:
        same = all(
            device_of(traces, r) is not None and device_of(run, r) is not None and
            device_of(traces, r).get("comm_wait_ns") == device_of(run, r).get("comm_wait_ns")
            for r in (0, 1))
        check("the ranks' traces merge to the figures of their reports",
              same and traces.get("straggler_rank") == run.get("straggler_rank"),
              {r: (device_of(traces, r) or {}).get("comm_wait_ns") for r in (0, 1)})
    if one is not None:
        unused = [v for v in one.get("visible_devices", []) if not v.get("used")]
        check("one of two GPUs unused: reported", one.get("unused_devices") == [1],
              one.get("unused_devices"))
        check("with the unused GPU's UUID", bool(unused) and unused[0]["uuid"].startswith("GPU-"),
              unused)


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))
    print(f"{sum(results)}/{len(results)} checks passed")
    sys.exit(0 if all(results) else 1)
