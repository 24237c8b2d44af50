"""Checks a live rank's JSON report for what the merge of ranks needs (issue 16): its rank entry
(host, pid), its visible devices with UUID and nvidia-smi index, and per device the collectives
by kind and their timing table. One PASS/FAIL line per check; exit 1 if any failed."""
import json
import sys


def main(path):
    with open(path) as f:
        r = json.load(f)
    checks = []

    def check(name, ok, detail=""):
        checks.append(ok)
        print(f"{'PASS' if ok else 'FAIL'} {name}{': ' + str(detail) if detail else ''}")

    ranks = r.get("ranks") or []
    check("the report has its rank", len(ranks) == 1, ranks[:1])
    if ranks:
        check("with its host and pid", bool(ranks[0].get("host")) and ranks[0].get("pid") is not None)
    vis = r.get("visible_devices") or []
    check("visible devices listed", len(vis) >= 1, vis)
    if vis:
        check("with their UUID", all(str(v.get("uuid", "")).startswith("GPU-") for v in vis))
        check("and nvidia-smi index", all(v.get("physical_index") is not None for v in vis))
    devices = r.get("devices") or []
    check("one device ran work", len(devices) == 1)
    world = ranks[0].get("world_size") if ranks else None
    if devices and world == 1:
        # NCCL runs no kernel for a one-rank all-reduce (copies and memsets): nothing to list.
        print("SKIP collectives by kind, the timing table: one rank runs no NCCL kernel")
    elif devices:
        d = devices[0]
        kinds = d.get("collectives") or []
        check("collectives by kind", bool(kinds) and kinds[0].get("op") == "allreduce", kinds)
        rows = len((d.get("collective_timings") or {}).get("start_ns", []))
        check("the timing table lists the all-reduces", rows >= 35, f"{rows} rows")
    check("straggler_rank is null for one rank", r.get("straggler_rank", 0) is None)
    print(f"{sum(checks)}/{len(checks)} checks passed")
    return 0 if all(checks) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
